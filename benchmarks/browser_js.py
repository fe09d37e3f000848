"""The JavaScript the browser benchmarks time with (input event to the change painted), in one place.

A leaf module: ``bench_browser``, ``bench_app``, ``bench_sessions``, ``bench_sections`` and
``bench_advantages_panel`` import it and nothing imports them back, so no two benchmarks import
each other in a circle. Importing it puts ``tests/`` on the path for the browser helpers there.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The browser helpers are test code (tests/helpers), not part of the package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

#: Times from a JS-side input event to the next paint after the target's DOM changed.
MEASURE_JS = """async ([target, action, arg]) => {
  const t0 = performance.now();
  const done = new Promise(res => { const obs = new MutationObserver(() => { obs.disconnect();
     requestAnimationFrame(() => setTimeout(() => res(performance.now() - t0), 0)); });
     obs.observe(target, {subtree: true, childList: true, attributes: true, characterData: true}); });
  if (action === 'key') {
    arg.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight', code: 'ArrowRight', keyCode: 39, bubbles: true}));
  } else {
    const [select, value] = arg; select.value = value; select.dispatchEvent(new Event('change', {bubbles: true}));
  }
  return await done; }"""

#: MEASURE_JS that gives up after 15 s (-1): a lost event must not hang the run.
TIMED_JS = MEASURE_JS.replace(
    "return await done; }", "return await Promise.race([done, new Promise(r => setTimeout(() => r(-1), 15000))]); }"
)
assert TIMED_JS != MEASURE_JS
