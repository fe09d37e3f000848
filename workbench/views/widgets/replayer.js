// The Replayer's front end: an episode's frames arrive once (zlib-compressed RGB, one binary
// buffer) and play here, at the chosen speed, one frame per step; the state, the decision's
// components, the reward strip and its cursor are drawn from the episode data in the same tick.
const KEYS = { left: "ArrowLeft", right: "ArrowRight" };
const VITALS = new Set(["health", "food", "drink", "energy"]);
// The reward strip: its height, the room left of it for the y axis, above and below the bars.
const STRIP_HEIGHT = 110, AXIS = 52, PAD = 8;
// Components rows' height and the list's cap when it sits below the picture (narrow layout).
const ROW_PX = 21, COMPONENTS_MAX = 150;

async function inflate(view) {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  if (!bytes.length) return new Uint8Array(0);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v; else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child);
  return node;
}

function esc(text) {
  return String(text).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}

function render({ model, el }) {
  const state = { step: 0, playing: false, last: null, frames: new Uint8Array(0), shape: [0, 0, 0], ep: null,
                  log: [], raf: null, syncTimer: null, loadId: 0 };
  const root = h("div", { class: "wb-replay", tabindex: "0" });
  const button = (label, title, action) => h("button", { class: "wb-btn", title, onclick: action }, label);
  const startBtn = button("⇤ start", "to the start (Home)", () => seek(0));
  const prevPay = button("◀ paying", "previous paying decision (Shift+Left)", () => jump("paying", -1));
  const back = button("◁", "one step back (Left)", () => seek(state.step - 1));
  const playBtn = button("▶ play", "play / pause (Space)", () => toggle());
  playBtn.classList.add("wb-play");  // fixed width: "❚❚ pause" is wider than "▶ play"
  const fwd = button("▷", "one step forward (Right)", () => seek(state.step + 1));
  const nextPay = button("paying ▶", "next paying decision (Shift+Right)", () => jump("paying", 1));
  const nextSpike = button("spike ⚡", "next reward spike (N)", () => jump("spikes", 1));
  const speed = h("select", { class: "wb-speed", title: "steps per second" });
  for (const s of [2, 5, 10, 15, 24, 30]) speed.append(h("option", { value: s }, `${s} steps/s`));
  speed.value = String(model.get("speed"));
  speed.addEventListener("change", () => { model.set("speed", Number(speed.value)); model.save_changes(); });
  const slider = h("input", { type: "range", min: "0", max: "0", step: "1", value: "0", class: "wb-slider" });
  slider.addEventListener("input", () => seek(Number(slider.value)));
  const counter = h("span", { class: "wb-counter" });
  const toolbar = h("div", { class: "wb-toolbar" }, startBtn, prevPay, back, playBtn, fwd, nextPay, nextSpike, speed,
                    slider, counter);
  const canvas = h("canvas", { class: "wb-picture", width: "64", height: "64" });
  const noPicture = h("div", { class: "wb-nopicture" }, "no frames or map views were recorded for this episode");
  const pictureBox = h("div", { class: "wb-picture-box" }, canvas, noPicture);
  const statePanel = h("div", { class: "wb-state" });
  const componentsPanel = h("div", { class: "wb-components" });
  const strip = h("canvas", { class: "wb-strip", width: "760", height: String(STRIP_HEIGHT) });
  const stripNote = h("div", { class: "wb-strip-note" });
  const messagePanel = h("div", { class: "wb-message" });
  // The strip right under the controls: frame, controls and strip are seen together at 1280x800.
  root.append(toolbar, strip, stripNote, h("div", { class: "wb-main" }, pictureBox, statePanel, componentsPanel),
              messagePanel);
  el.append(root);
  const ctx = canvas.getContext("2d");
  let image = null;
  let stripBase = null;

  root.workbenchReplay = { log: state.log, get step() { return state.step; }, get playing() { return state.playing; },
                           get loaded() { return state.ep !== null && state.loadId === 0; } };

  function nSteps() { return state.ep ? state.ep.n_steps : 0; }
  function decisionAt(step) { return step <= 0 ? 0 : state.ep.step_decision[step - 1]; }
  function completedAt(step) {  // decisions complete once `step` steps ran (binary search)
    const ends = state.ep.decision_end; let lo = 0, hi = ends.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (ends[mid] <= step) lo = mid + 1; else hi = mid; }
    return lo;
  }

  function drawFrame(step) {
    const [n, H, W] = state.shape;
    if (!n) return;
    const index = Math.min(step, n - 1);
    if (!image || image.width !== W || image.height !== H) image = ctx.createImageData(W, H);
    const src = state.frames, data = image.data; let q = 0;
    for (let p = index * W * H * 3, end = p + W * H * 3; p < end; p += 3) {
      data[q++] = src[p]; data[q++] = src[p + 1]; data[q++] = src[p + 2]; data[q++] = 255;
    }
    ctx.putImageData(image, 0, 0);
  }

  function stateHtml(step) {
    const ep = state.ep, done = completedAt(step), d = decisionAt(step);
    // the vitals show even at 0 (health 0 is death); other items only when held
    const inv = ep.inventory[done].map((v, i) => v || VITALS.has(ep.items[i]) ? `${esc(ep.items[i])} ${v}` : null)
      .filter(Boolean).join(", ");
    const unlocked = Object.entries(ep.first_unlock).filter(([, at]) => at <= done).map(([name]) => name);
    let actions = "—", env = "—";
    if (d > 0) {
      const acts = ep.actions[d - 1], first = d > 1 ? ep.decision_end[d - 2] : 0, at = step - first - 1;
      // a step per decision (no frames): the step is the whole decision, so it is highlighted whole
      actions = ep.step_per_decision ? `<span class="wb-now">${acts.map(esc).join(" ")}</span>`
        : acts.map((a, i) => i === at ? `<b class="wb-now">${esc(a)}</b>` : esc(a)).join(" ");
      env = ep.env_reward[d - 1].toFixed(1);
    }
    return `<div><b>step ${step}</b> of ${ep.n_steps} · decision ${d || "— (reset)"} of ${ep.n_decisions}</div>`
      + `<div><b>actions</b>: ${actions}</div><div><b>Crafter reward</b> (decision): ${env}</div>`
      + `<div><b>state after decision ${done}</b></div><div><b>inventory</b>: ${inv || "empty"}</div>`
      + `<div><b>achievements</b> (${unlocked.length}): ${unlocked.map(esc).join(", ") || "none"}</div>`;
  }

  function componentsHtml(step) {
    const ep = state.ep, d = decisionAt(step);
    if (d === 0) return "<i>reset frame: no decision yet</i>";
    const rows = ep.components[String(d)] || [];
    const total = ep.reward[d - 1];
    if (!rows.length) return `<b>decision ${d}</b>: pays nothing`;
    const body = rows.map(([label, value]) => `<tr><td>${esc(label)}</td><td class="wb-num">${value.toFixed(3)}</td></tr>`);
    return `<b>decision ${d}</b>: ${total.toFixed(3)}<table><tbody>${body.join("")}</tbody></table>`;
  }

  function stripX(d) {  // the canvas x of the middle of decision d (1-based)
    return AXIS + (d - 0.5) * (strip.width - AXIS) / state.ep.n_decisions;
  }

  function prepareStrip() {
    const ep = state.ep, n = ep.n_decisions;
    if (strip.clientWidth > 0) strip.width = Math.round(strip.clientWidth);  // 1 canvas px = 1 CSS px: crisp text
    const W = strip.width, H = strip.height, plotW = W - AXIS;
    const off = document.createElement("canvas"); off.width = W; off.height = H;
    const g = off.getContext("2d");
    g.fillStyle = "#fff"; g.fillRect(0, 0, W, H);
    const kinds = Object.keys(ep.by_kind);
    let up = 0, down = 0;
    for (let i = 0; i < n; i++) {
      let u = 0, dn = 0;
      for (const k of kinds) { const v = ep.by_kind[k][i]; if (v > 0) u += v; else dn += v; }
      up = Math.max(up, u); down = Math.min(down, dn);
    }
    const span = Math.max(up - down, 1e-9), zero = PAD + (H - 2 * PAD) * up / span;
    const scale = (H - 2 * PAD) / span, bar = Math.max(plotW / n, 1);
    for (let i = 0; i < n; i++) {
      const x = AXIS + Math.floor(i * plotW / n); let top = zero, bottom = zero;
      for (const k of kinds) {
        const v = ep.by_kind[k][i]; if (!v) continue;
        g.fillStyle = ep.kind_colors[k];
        if (v > 0) { top -= v * scale; g.fillRect(x, top, Math.ceil(bar), v * scale); }
        else { g.fillRect(x, bottom, Math.ceil(bar), -v * scale); bottom -= v * scale; }
      }
    }
    g.strokeStyle = "#555"; g.lineWidth = 1; g.beginPath(); g.moveTo(AXIS, zero + 0.5); g.lineTo(W, zero + 0.5); g.stroke();
    drawAxis(g, up, down, zero, scale);
    stripBase = off;
    stripNote.innerHTML = `reward per decision (stacked: ${kinds.map((k) => `<span style="color:${ep.kind_colors[k]}">■</span> ${esc(ep.kind_labels[k])}`).join(" · ")}); `
      + `click to go there · ${esc(ep.config)}`;
    stripNote.title = stripNote.innerText;
  }

  function drawAxis(g, up, down, zero, scale) {  // the y axis: its line, ticks at max, 0 and min, and its label
    const H = strip.height;
    g.strokeStyle = "#333"; g.fillStyle = "#333"; g.lineWidth = 1;
    g.beginPath(); g.moveTo(AXIS - 0.5, PAD - 2); g.lineTo(AXIS - 0.5, H - PAD + 2); g.stroke();
    g.font = "10px sans-serif"; g.textAlign = "right"; g.textBaseline = "middle";
    const ticks = [[up, zero - up * scale], [0, zero]];
    if (down < 0) ticks.push([down, zero - down * scale]);
    let last = -Infinity;
    for (const [value, y] of ticks.sort((a, b) => a[1] - b[1])) {
      if (y - last < 11) continue;  // two ticks closer than a line of text: keep the first
      last = y;
      g.beginPath(); g.moveTo(AXIS - 4, Math.round(y) + 0.5); g.lineTo(AXIS, Math.round(y) + 0.5); g.stroke();
      g.fillText(Number(value.toFixed(2)).toString(), AXIS - 6, Math.min(Math.max(y, 6), H - 6));
    }
    g.save(); g.translate(10, H / 2); g.rotate(-Math.PI / 2); g.textAlign = "center";
    g.fillText("reward", 0, 0); g.restore();
  }

  function componentsHeight() {  // as tall as the episode's longest list needs, at most COMPONENTS_MAX
    let most = 0;
    for (const rows of Object.values(state.ep.components)) most = Math.max(most, rows.length);
    return Math.min(COMPONENTS_MAX, ROW_PX * (most + 1) + 6);
  }

  function drawStrip(step) {
    if (!stripBase) return;
    const g = strip.getContext("2d"), H = strip.height;
    g.drawImage(stripBase, 0, 0);
    const d = decisionAt(step) || completedAt(step);
    if (d > 0) {
      const x = Math.floor(stripX(d)) + 0.5;
      g.strokeStyle = "#000"; g.lineWidth = 1.5; g.beginPath(); g.moveTo(x, 0); g.lineTo(x, H); g.stroke();
    }
  }

  function show(step, { sync = true } = {}) {
    if (!state.ep) return;
    step = Math.max(0, Math.min(nSteps(), step | 0));
    state.step = step;
    drawFrame(step);
    statePanel.innerHTML = stateHtml(step);
    const d = decisionAt(step);
    if (d !== state.shownDecision) {  // the components and the message change with the decision only
      state.shownDecision = d;
      componentsPanel.innerHTML = componentsHtml(step);
      if (state.ep.messages || state.ep.calls_given) {
        const said = d > 0 ? (state.ep.messages ? state.ep.messages[d - 1] : "") : "(reset: the model has not answered yet)";
        const given = d > 0 && state.ep.calls_given ? state.ep.calls_given[d - 1] : null;
        // the task app normalised this decision's calls: show them beside what it played
        messagePanel.textContent = said + (given ? `\n\ncalls as given: ${given}\nplayed: ${state.ep.actions[d - 1].join(", ")}` : "");
      }
    }
    drawStrip(step);
    updateButtons();
    slider.value = String(step);
    counter.textContent = `${step} / ${nSteps()}`;
    if (state.playing) state.log.push([performance.now(), step]);
    if (sync) scheduleSync();
  }

  function scheduleSync() {
    clearTimeout(state.syncTimer);
    // the step goes with the id of its episode: the kernel can tell a report that crossed a switch
    state.syncTimer = setTimeout(() => {
      if (model.get("step") !== state.step) {
        model.set({ step: state.step, step_episode: state.ep.id }); model.save_changes();
      }
    }, state.playing ? 500 : 120);
  }

  function seek(step) { if (state.playing) pause(); show(step); }

  function jumpTarget(which, direction) {  // the decision to jump to, or undefined when there is none
    const list = state.ep[which], d = decisionAt(state.step) || completedAt(state.step);
    return direction > 0 ? list.find((x) => x > d) : [...list].reverse().find((x) => x < d);
  }

  function jump(which, direction) {
    const target = jumpTarget(which, direction);
    if (target !== undefined) seek(state.ep.decision_end[target - 1]);
  }

  function updateButtons() {  // a button with nowhere to go is disabled
    prevPay.disabled = jumpTarget("paying", -1) === undefined;
    nextPay.disabled = jumpTarget("paying", 1) === undefined;
    nextSpike.disabled = jumpTarget("spikes", 1) === undefined;
  }

  function tick(now) {
    if (!state.playing) return;
    const interval = 1000 / Number(speed.value);
    if (state.last === null) state.last = now;
    if (now - state.last >= interval - 2) {
      state.last += interval;
      if (now - state.last > 30 * interval) state.last = now;  // stalled over a second: resume from now
      if (state.step >= nSteps()) { pause(); return; }
      show(state.step + 1, { sync: false });
    }
    state.raf = requestAnimationFrame(tick);
  }

  function play() {
    if (!state.ep || state.playing) return;
    if (state.step >= nSteps()) show(0);
    state.playing = true; state.last = null; state.log.length = 0;
    playBtn.textContent = "❚❚ pause"; state.raf = requestAnimationFrame(tick);
  }

  function pause() {
    state.playing = false; cancelAnimationFrame(state.raf);
    playBtn.textContent = "▶ play"; scheduleSync();
  }

  function toggle() { if (state.playing) pause(); else play(); }

  root.addEventListener("keydown", (event) => {
    if (event.target.tagName === "SELECT") return;
    const k = event.key; let handled = true;
    if (k === KEYS.left) { if (event.shiftKey) jump("paying", -1); else seek(state.step - 1); }
    else if (k === KEYS.right) { if (event.shiftKey) jump("paying", 1); else seek(state.step + 1); }
    else if (k === " ") toggle();
    else if (k === "n" || k === "N") jump("spikes", 1);
    else if (k === "Home") seek(0);
    else if (k === "End") seek(nSteps());
    else handled = false;
    if (handled) { event.preventDefault(); event.stopPropagation(); }
  });

  strip.addEventListener("click", (event) => {
    if (!state.ep) return;
    const rect = strip.getBoundingClientRect();
    const x = (event.clientX - rect.left) * strip.width / rect.width;  // in canvas px
    const n = state.ep.n_decisions;
    const d = Math.min(n, Math.max(1, Math.floor((x - AXIS) / (strip.width - AXIS) * n) + 1));
    seek(state.ep.decision_end[d - 1]);
    root.focus();
  });

  async function load() {
    const id = ++state.loadId;
    clearTimeout(state.syncTimer);  // a step not yet reported belongs to the episode shown before
    const shape = model.get("frame_shape");
    const frames = await inflate(model.get("frames"));
    if (id !== state.loadId) return;
    state.frames = frames; state.shape = shape;
    const [n, H, W] = shape;
    if (n) { canvas.width = W; canvas.height = H; canvas.style.height = `${Math.round(384 * H / W)}px`; }
    canvas.style.display = n ? "" : "none"; noPicture.style.display = n ? "none" : "";
    episodeChanged();
    state.loadId = 0;
  }

  function episodeChanged() {
    const wasPlaying = state.playing; if (wasPlaying) pause();
    clearTimeout(state.syncTimer);
    state.ep = model.get("episode"); state.shownDecision = -1;
    if (!state.ep || !state.ep.n_steps) return;
    slider.max = String(state.ep.n_steps);
    messagePanel.style.display = state.ep.messages || state.ep.calls_given ? "" : "none";
    root.style.setProperty("--wb-components-h", `${componentsHeight()}px`);
    prepareStrip();
    show(model.get("step"), { sync: false });
  }

  model.on("change:frames", load);
  model.on("change:episode", () => { if (state.loadId === 0) episodeChanged(); });
  model.on("change:step", () => { const s = model.get("step"); if (s !== state.step && !state.playing) show(s, { sync: false }); });
  model.on("change:speed", () => { speed.value = String(model.get("speed")); });
  load();
  return () => { state.playing = false; cancelAnimationFrame(state.raf); clearTimeout(state.syncTimer); };
}

export default { render };
