#pragma once
// The stylesheet and the script inlined in the page of `tdbg report`: the page
// fetches nothing when it is opened.

namespace tdbg::cli::report::detail {

inline const char* const stylesheet = R"css(
:root{--ink:#1d2330;--muted:#5b6475;--line:#e3e6ec;--card:#fff;--page:#f4f5f8}
*{box-sizing:border-box}
body{margin:0;background:var(--page);color:var(--ink);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans","Liberation Sans",Arial,sans-serif}
main{max-width:1160px;margin:0 auto;padding:24px 20px 48px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:17px;margin:0 0 2px;word-break:break-all}
h3{font-size:15px;margin:0 0 10px}
.sub{color:var(--muted);margin:0 0 14px}
section.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px 18px;margin:0 0 16px;box-shadow:0 1px 2px rgba(20,30,50,.05)}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:3px 16px;margin:0}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0;word-break:break-all}
.hint{color:var(--muted);font-weight:normal;font-size:12px}
.notes{margin:8px 0 0;padding-left:18px;color:var(--muted);font-size:13px}
nav.index{columns:3 260px;column-gap:20px;font-size:13px}
nav.index a{display:block;color:#1f4fa8;text-decoration:none;word-break:break-all;padding:1px 0}
nav.index a:hover{text-decoration:underline}
nav.index span.group{display:block;color:#666;font-size:11px;text-transform:uppercase;letter-spacing:.05em;margin-top:6px}
h2.group{font-size:15px;color:#555;margin:22px 0 6px;text-transform:uppercase;letter-spacing:.05em}
.flag{display:inline-block;font-size:10px;font-weight:600;color:#fff;background:#d62828;border-radius:3px;padding:0 4px;margin-left:4px;vertical-align:1px}
.flag.diverges{background:#000}
.sub{white-space:pre-line}
.grid.runs{grid-template-columns:repeat(auto-fit,minmax(420px,1fr))}
svg.plot .divergence-label{font-size:10px;font-weight:600;fill:#000;paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
section.diff{border-left:4px solid #000;padding:8px 12px;margin:12px 0 0;background:#fafafa}
section.diff h3{margin:0 0 6px}
table.runs{border-collapse:collapse;font-size:13px}
table.runs th{text-align:left;color:var(--muted);font-weight:600;padding:2px 10px 2px 0}
table.runs td{padding:2px 10px 2px 0;vertical-align:top;white-space:nowrap}
table.runs td.path{white-space:normal;word-break:break-all}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:10px 14px;margin-top:8px}
.grid.single{grid-template-columns:minmax(0,720px)}
figure.chart{margin:0;position:relative}
figure.chart.wide{margin-top:10px}
figure.chart figcaption{font-size:13px;margin:0 0 2px}
svg.plot{display:block;width:100%;height:auto}
svg.plot .plot-area{fill:#fbfbfd;stroke:none}
svg.plot .grid{stroke:#e8eaef;stroke-width:1}
svg.plot .axis{stroke:#8a92a3;stroke-width:1}
svg.plot .tick{font-size:10.5px;fill:#5b6475}
svg.plot .row-label{font-size:12px;fill:var(--ink)}
svg.plot .empty,svg.plot .empty-row{font-size:12px;fill:#8a92a3}
svg.plot .line{fill:none;stroke-width:2;stroke-linejoin:round;stroke-linecap:round}
svg.plot .nonfinite{stroke-width:2;fill:none}
svg.plot .rule-band{fill-opacity:.13}
svg.plot .rule-elsewhere{fill-opacity:.3}
svg.plot .hit{fill:#000;fill-opacity:0}
svg.plot .hit:hover{fill-opacity:.08}
svg.plot .key-frame{fill:none;stroke:#c9ced8}
svg.plot .step-ticks{stroke:#6b7385;stroke-width:1.5}
svg.plot .eval-ticks{stroke:#b9bfcb;stroke-width:1.5}
svg.plot .skip-ticks{stroke:#dde0e6;stroke-width:1.5}
svg.plot .cursor{stroke:#9aa1b0;stroke-width:1;stroke-dasharray:3 2}
svg.plot .nf-label{fill:#b3261e}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12.5px;color:var(--muted);margin:6px 0 2px}
.key{display:inline-flex;align-items:center;gap:5px}
.swatch{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-1px}
.swatch.faint{opacity:.3}
.readout{position:absolute;pointer-events:none;background:rgba(255,255,255,.96);border:1px solid var(--line);border-radius:4px;padding:3px 6px;font-size:11.5px;line-height:1.35;box-shadow:0 2px 6px rgba(20,30,50,.12);display:none;white-space:nowrap;z-index:2}
table.rules{border-collapse:collapse;width:100%;font-size:13px;margin-top:8px}
table.rules th{text-align:left;color:var(--muted);font-weight:600;border-bottom:1px solid var(--line);padding:5px 8px}
table.rules td{border-bottom:1px solid var(--line);padding:6px 8px;vertical-align:top}
table.rules .num{text-align:right}
table.rules td.steps,table.rules td.params{overflow-wrap:anywhere}
table.rules .param{white-space:nowrap}
.badge{display:inline-block;border-radius:10px;padding:1px 8px;font-size:12px;font-weight:600;white-space:nowrap}
.badge.good{background:#e3f4ea;color:#1c6b3c}
.badge.bad{background:#fde2e1;color:#a61b1b}
.badge.error{background:#fff1d6;color:#8a5300}
.error-text{color:#8a5300;font-size:12px;margin-top:3px;word-break:break-word}
.reason{color:var(--muted);font-size:12px;margin-top:2px;word-break:break-word}
ul.fired{margin:0 0 10px;padding-left:18px;color:#9b1c1c;font-size:13px;word-break:break-word}
footer{color:var(--muted);font-size:12px;text-align:center;margin-top:20px}
)css";

// Hovering a line chart shows every series' value at the nearest saved step.
inline const char* const script = R"js(
document.querySelectorAll('figure.chart[data-hover]').forEach(function (fig) {
  var rows = fig.getAttribute('data-hover').split(';').filter(Boolean).map(function (r) {
    var f = r.split('|'); return {step: +f[0], label: f[1], value: f[2], colour: f[3]};
  });
  if (!rows.length) return;
  var svg = fig.querySelector('svg'), cursor = fig.querySelector('.cursor'), box = fig.querySelector('.readout');
  var x0 = +fig.dataset.x0, x1 = +fig.dataset.x1, lo = +fig.dataset.lo, hi = +fig.dataset.hi, w = +fig.dataset.w;
  svg.addEventListener('mousemove', function (e) {
    var rect = svg.getBoundingClientRect(), k = rect.width / w;
    var step = lo + ((e.clientX - rect.left) / k - x0) / (x1 - x0) * (hi - lo);
    var best = rows[0].step;
    rows.forEach(function (r) { if (Math.abs(r.step - step) < Math.abs(best - step)) best = r.step; });
    var at = rows.filter(function (r) { return r.step === best; });
    var px = x0 + (best - lo) / (hi - lo) * (x1 - x0);
    cursor.setAttribute('x1', px); cursor.setAttribute('x2', px); cursor.setAttribute('visibility', 'visible');
    box.textContent = '';
    var head = document.createElement('div'); head.textContent = 'step ' + best; head.style.fontWeight = '600'; box.appendChild(head);
    at.forEach(function (r) {
      var line = document.createElement('div'), dot = document.createElement('span');
      dot.className = 'swatch'; dot.style.background = r.colour; dot.style.width = dot.style.height = '8px'; dot.style.marginRight = '4px';
      line.appendChild(dot); line.appendChild(document.createTextNode(r.label + ': ' + r.value)); box.appendChild(line);
    });
    box.style.display = 'block';
    var left = px * k + 12; if (left + box.offsetWidth > rect.width) left = px * k - box.offsetWidth - 12;
    box.style.left = left + 'px'; box.style.top = (rect.top - fig.getBoundingClientRect().top + 14) + 'px';
  });
  svg.addEventListener('mouseleave', function () { cursor.setAttribute('visibility', 'hidden'); box.style.display = 'none'; });
});
)js";

} // namespace tdbg::cli::report::detail
