// Tells the kernel once the element the selector names is drawn in this browser tab (or once
// the time allowed is over), so the session builds what no one sees yet after the first page.
export default {
  render({ model, el }) {
    el.style.display = "none";
    const selector = model.get("selector");
    const deadline = performance.now() + model.get("timeout_ms");
    const check = () => {
      const found = document.querySelector(selector);
      if ((found && found.getBoundingClientRect().width > 0) || performance.now() > deadline) {
        // one frame more: laid out is not yet painted
        requestAnimationFrame(() => model.send({ drawn: Boolean(found) }));
      } else {
        requestAnimationFrame(check);
      }
    };
    requestAnimationFrame(check);
  },
};
