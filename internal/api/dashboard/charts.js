// Cairn dashboard charts: hand-written SVG with axes, tick labels, units, a legend and a
// text alternative. Every text is set with textContent; nothing is parsed as HTML.
"use strict";

const CairnCharts = (() => {
  const NS = "http://www.w3.org/2000/svg";
  let nextID = 0;

  // el makes an SVG element with attributes, appended to parent when given.
  function el(name, attrs, parent) {
    const e = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (parent) parent.appendChild(e);
    return e;
  }

  // text adds an SVG text element.
  function text(parent, x, y, s, attrs) {
    const t = el("text", Object.assign({ x, y }, attrs || {}), parent);
    t.textContent = s;
    return t;
  }

  // html makes an HTML element with a class and text.
  function html(name, cls, s) {
    const e = document.createElement(name);
    if (cls) e.className = cls;
    if (s !== undefined) e.textContent = s;
    return e;
  }

  // fmt formats a number for a tick or a label: compact, at most 3 significant digits.
  function fmt(v) {
    if (v === 0) return "0";
    const a = Math.abs(v);
    if (a >= 1e4 || a < 1e-3) return new Intl.NumberFormat("en", { notation: "compact", maximumSignificantDigits: 3 }).format(v).replace(/E/, "e");
    return new Intl.NumberFormat("en", { maximumSignificantDigits: 3 }).format(v);
  }

  // ticks returns about n round values covering [lo, hi].
  function ticks(lo, hi, n) {
    if (!(hi > lo)) { hi = lo + (lo === 0 ? 1 : Math.abs(lo)); }
    const raw = (hi - lo) / n;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw);
    const out = [];
    for (let v = Math.floor(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
    if (out[0] > lo) out.unshift(out[0] - step);
    if (out[out.length - 1] < hi) out.push(out[out.length - 1] + step);
    return out;
  }

  // legend returns a list of swatches: items are {label, swatch(svg)}.
  function legend(items) {
    const ul = html("ul", "legend");
    for (const it of items) {
      const li = html("li");
      const svg = el("svg", { width: 18, height: 12, viewBox: "0 0 18 12", "aria-hidden": "true", class: "chart swatch" });
      it.swatch(svg);
      li.appendChild(svg);
      li.appendChild(document.createTextNode(it.label));
      ul.appendChild(li);
    }
    return ul;
  }

  // figure wraps an SVG in a captioned figure with a text alternative.
  function figure(title, svg, summary, extra) {
    const id = "chart-" + (++nextID);
    const fig = html("figure");
    const cap = html("figcaption", "", title);
    cap.id = id + "-title";
    const desc = html("p", "chart-note", summary);
    desc.id = id + "-desc";
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-labelledby", cap.id);
    svg.setAttribute("aria-describedby", desc.id);
    fig.append(cap, svg, ...extra, desc);
    return fig;
  }

  // lineChart draws a series of buckets over seq: the mean as a line, min to max as a
  // band, the fences dashed, z anomalies as filled circles and IQR anomalies as open
  // diamonds. o: {title, unit, first, last, points:[{first_seq,last_seq,mean,min,max,time}],
  // fences:[lo,hi]|null, z:[{seq,value,z}], iqr:[{seq,value}], zTotal, iqrTotal, summary}.
  function lineChart(o) {
    const W = 640, H = 270, L = 64, R = 12, T = 12, B = 52;
    const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", preserveAspectRatio: "xMidYMid meet" });
    const pts = o.points;
    let lo = Math.min(...pts.map((p) => p.min)), hi = Math.max(...pts.map((p) => p.max));
    if (o.fences) for (const f of o.fences) if (f >= lo - (hi - lo) * 0.25 && f <= hi + (hi - lo) * 0.25) { lo = Math.min(lo, f); hi = Math.max(hi, f); }
    const ys = ticks(lo, hi, 5);
    lo = ys[0]; hi = ys[ys.length - 1];
    const x0 = o.first, x1 = Math.max(o.last, o.first + 1);
    const px = (seq) => L + (seq - x0) / (x1 - x0) * (W - L - R);
    const py = (v) => T + (hi - v) / (hi - lo) * (H - T - B);
    for (const v of ys) {
      el("line", { x1: L, x2: W - R, y1: py(v), y2: py(v), class: "grid" }, svg);
      text(svg, L - 6, py(v) + 4, fmt(v), { "text-anchor": "end" });
    }
    el("line", { x1: L, x2: L, y1: T, y2: H - B, class: "axis" }, svg);
    el("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, class: "axis" }, svg);
    text(svg, 14, (T + H - B) / 2, o.unit, { "text-anchor": "middle", transform: `rotate(-90 14 ${(T + H - B) / 2})` });
    // x ticks: five points of the series, labelled with their time and seq.
    const tickPts = pts.length <= 5 ? pts : [0, 1, 2, 3, 4].map((i) => pts[Math.round(i * (pts.length - 1) / 4)]);
    for (const p of tickPts) {
      const x = px(p.first_seq);
      el("line", { x1: x, x2: x, y1: H - B, y2: H - B + 4, class: "axis" }, svg);
      text(svg, x, H - B + 16, shortTime(p.time), { "text-anchor": "middle" });
      text(svg, x, H - B + 29, "seq " + p.first_seq, { "text-anchor": "middle" });
    }
    text(svg, (L + W - R) / 2, H - 6, "time (UTC), entries in seq order", { "text-anchor": "middle" });
    const mid = (p) => (p.first_seq + p.last_seq) / 2;
    if (pts.some((p) => p.n > 1)) {
      const top = pts.map((p) => `${px(mid(p))},${py(p.max)}`), bottom = pts.map((p) => `${px(mid(p))},${py(p.min)}`).reverse();
      el("polygon", { points: top.concat(bottom).join(" "), class: "band" }, svg);
    }
    if (o.fences) for (const f of o.fences) if (f >= lo && f <= hi) el("line", { x1: L, x2: W - R, y1: py(f), y2: py(f), class: "fence" }, svg);
    el("polyline", { points: pts.map((p) => `${px(mid(p))},${py(p.mean)}`).join(" "), class: "line" }, svg);
    for (const a of o.iqr) {
      const x = px(a.seq), y = py(a.value);
      const d = el("path", { d: `M${x} ${y - 6}L${x + 6} ${y}L${x} ${y + 6}L${x - 6} ${y}Z`, class: "iqr" }, svg);
      el("title", {}, d).textContent = `IQR anomaly: seq ${a.seq}, ${fmt(a.value)} ${o.unit}`;
    }
    for (const a of o.z) {
      const c = el("circle", { cx: px(a.seq), cy: py(a.value), r: 3.5, class: "z" }, svg);
      el("title", {}, c).textContent = `z anomaly: seq ${a.seq}, ${fmt(a.value)} ${o.unit}, z = ${a.z.toFixed(2)}`;
    }
    const items = [
      { label: "mean", swatch: (s) => el("line", { x1: 0, x2: 18, y1: 6, y2: 6, class: "line" }, s) },
      { label: "min to max", swatch: (s) => el("rect", { x: 0, y: 2, width: 18, height: 8, class: "band" }, s) },
      { label: "IQR fences", swatch: (s) => el("line", { x1: 0, x2: 18, y1: 6, y2: 6, class: "fence" }, s) },
      { label: `z anomaly (${o.zTotal})`, swatch: (s) => el("circle", { cx: 9, cy: 6, r: 3.5, class: "z" }, s) },
      { label: `IQR anomaly (${o.iqrTotal})`, swatch: (s) => el("path", { d: "M9 1L14 6L9 11L4 6Z", class: "iqr" }, s) },
    ];
    return figure(o.title, svg, o.summary, [legend(items)]);
  }

  // shortTime turns an RFC 3339 time into "MM-DD HH:MM".
  function shortTime(t) {
    return t ? t.slice(5, 10) + " " + t.slice(11, 16) : "?";
  }

  // pairedBars draws, per row, two horizontal bars on two axes of their own (each
  // measure has its own unit). o: {title, rows:[{label, a, b}], a:{name, unit},
  // b:{name, unit}, summary}.
  function pairedBars(o) {
    const rowH = 26, W = 640, labelW = 150, gap = 24, T = 8, B = 44;
    const H = T + B + rowH * o.rows.length;
    const panelW = (W - labelW - gap - 12) / 2;
    const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart" });
    o.rows.forEach((r, i) => {
      const t = text(svg, labelW - 8, T + rowH * i + rowH / 2 + 4, r.label.length > 22 ? r.label.slice(0, 21) + "…" : r.label, { "text-anchor": "end" });
      el("title", {}, t).textContent = r.label;
    });
    [[o.a, "a", "bar1", labelW], [o.b, "b", "bar2", labelW + panelW + gap]].forEach(([m, key, cls, x0]) => {
      const ts = ticks(0, Math.max(...o.rows.map((r) => r[key]), 0), 4);
      const top = ts[ts.length - 1];
      const px = (v) => x0 + v / top * panelW;
      for (const v of ts) {
        el("line", { x1: px(v), x2: px(v), y1: T, y2: H - B, class: "grid" }, svg);
        text(svg, px(v), H - B + 14, fmt(v), { "text-anchor": "middle" });
      }
      el("line", { x1: x0, x2: x0, y1: T, y2: H - B, class: "axis" }, svg);
      el("line", { x1: x0, x2: x0 + panelW, y1: H - B, y2: H - B, class: "axis" }, svg);
      text(svg, x0 + panelW / 2, H - 8, `${m.name} (${m.unit})`, { "text-anchor": "middle" });
      o.rows.forEach((r, i) => {
        const b = el("rect", { x: x0, y: T + rowH * i + 5, width: Math.max(px(r[key]) - x0, r[key] > 0 ? 1 : 0), height: rowH - 10, class: cls }, svg);
        el("title", {}, b).textContent = `${r.label}: ${fmt(r[key])} ${m.unit}`;
      });
    });
    const items = [
      { label: `${o.a.name} (${o.a.unit})`, swatch: (s) => el("rect", { x: 0, y: 2, width: 18, height: 8, class: "bar1" }, s) },
      { label: `${o.b.name} (${o.b.unit})`, swatch: (s) => el("rect", { x: 0, y: 2, width: 18, height: 8, class: "bar2" }, s) },
    ];
    return figure(o.title, svg, o.summary, [legend(items)]);
  }

  return { lineChart, pairedBars, fmt };
})();
