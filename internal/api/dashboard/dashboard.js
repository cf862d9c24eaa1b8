// Cairn dashboard: reads the /api routes of this server and shows them. The API key, when
// the server asks for one, is asked once, kept in this tab's sessionStorage and sent as
// Authorization: Bearer, never in a URL. Data is shown with textContent only.
"use strict";

(() => {
  const KEY = "cairn.apiKey";
  const PAGE = 50;
  const POINTS = 120;
  const DIMENSIONS = [["input_tokens", "Input tokens"], ["output_tokens", "Output tokens"], ["cost_usd", "Cost"], ["latency_ms", "Latency"]];
  const $ = (id) => document.getElementById(id);
  const fmt = CairnCharts.fmt;
  let keyPrompt = null; // the pending key prompt, shared by every request that met a 401
  const page = { offset: 0, total: 0 };
  let hasRun = false; // whether a regression run is saved, from the layers

  // node makes an element with a class and text.
  function node(name, cls, s) {
    const e = document.createElement(name);
    if (cls) e.className = cls;
    if (s !== undefined && s !== null) e.textContent = String(s);
    return e;
  }

  // askKey shows the key dialog once for all waiting requests.
  function askKey(refused) {
    if (!keyPrompt) {
      keyPrompt = new Promise((resolve) => {
        const dlg = $("key-dialog"), input = $("key-input");
        $("key-error").hidden = !refused;
        input.value = "";
        $("key-form").onsubmit = (ev) => {
          ev.preventDefault();
          const k = input.value.trim();
          if (!k) return;
          sessionStorage.setItem(KEY, k);
          dlg.close();
          keyPrompt = null;
          resolve();
        };
        dlg.showModal();
        input.focus();
      });
    }
    return keyPrompt;
  }

  // api calls a route, with the key when there is one, and asks for the key on a 401.
  async function api(method, path, body) {
    for (let refused = false; ; refused = true) {
      const headers = { Accept: "application/json" };
      const key = sessionStorage.getItem(KEY);
      if (key) headers.Authorization = "Bearer " + key;
      if (body !== undefined) headers["Content-Type"] = "application/json";
      const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "omit", cache: "no-store" });
      if (res.status === 401) {
        if (key) sessionStorage.removeItem(KEY);
        await askKey(refused || Boolean(key));
        continue;
      }
      const data = await res.json().catch(() => null);
      if (!res.ok) {
        // Errors are {"error": code, "message": text, "code": code}.
        const err = new Error((data && data.message) || `${method} ${path}: HTTP ${res.status}`);
        err.status = res.status;
        err.code = data && data.error;
        throw err;
      }
      return data;
    }
  }

  // show replaces the children of a result area.
  function show(id, ...children) {
    $(id).replaceChildren(...children);
  }

  function verdict(good, s) {
    return node("p", "verdict " + (good ? "good" : "bad"), s);
  }

  function failed(id, err) {
    show(id, verdict(false, err.message));
  }

  function bytes(n) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    for (; n >= 1024 && i < units.length - 1; i++) n /= 1024;
    return `${i ? n.toFixed(1) : n} ${units[i]}`;
  }

  // Chain overview. The entries are what the chain's ends say (seq range), read in
  // constant time; counting the rows would read the whole table, and verification is
  // what finds a row missing.
  async function loadStats() {
    const s = await api("GET", "/api/chain/stats?count=false");
    $("stat-entries").textContent = s.total_entries.toLocaleString("en");
    $("stat-last").textContent = s.last_entry || "none yet";
    $("stat-first").textContent = s.first_entry || "none yet";
    $("stat-size").textContent = bytes(s.file_bytes);
    $("stat-head").textContent = s.last_hmac_hash || "—";
  }

  async function verify(full) {
    const buttons = [$("verify-smoke"), $("verify-full")];
    buttons.forEach((b) => { b.disabled = true; });
    show("verify-result", node("p", "muted", full ? "Verifying every entry…" : "Verifying the first and last entries…"));
    try {
      const v = await api("POST", "/api/chain/verify", { full });
      const how = `${v.mode} verification of seq ${v.first_seq} to ${v.last_seq}, ${v.entries_verified.toLocaleString("en")} entries passed, ` +
        `HMACs ${v.hmacs_checked ? "checked" : "not checked (no secret)"}, ${v.elapsed_ms} ms`;
      if (v.valid) {
        show("verify-result", verdict(true, "Valid: " + how));
      } else {
        const go = node("button", "", `Show entry ${v.error_seq}`);
        go.type = "button";
        go.onclick = () => goToSeq(v.error_seq);
        show("verify-result", verdict(false, `Invalid at seq ${v.error_seq}: ${v.reason}${v.wrong_secret ? " (looks like a wrong secret)" : ""}`),
          node("p", "", v.error), node("p", "muted", how), go);
      }
    } catch (err) {
      failed("verify-result", err);
    } finally {
      buttons.forEach((b) => { b.disabled = false; });
    }
  }

  // Entry browser: pages come from the server, PAGE entries at a time.
  async function loadPage(offset) {
    const p = await api("GET", `/api/chain?limit=${PAGE}&offset=${offset}`);
    page.offset = p.offset;
    page.total = p.total;
    const rows = p.entries.map((e) => {
      const tr = node("tr");
      tr.tabIndex = 0;
      tr.dataset.seq = e.seq;
      tr.append(node("td", "num", e.seq), node("td", "", e.time), node("td", "", e.span_name), node("td", "num", bytes(e.body_bytes)),
        node("td", "hash hide-narrow", e.hmac_hash));
      tr.onclick = () => openEntry(e.seq);
      tr.onkeydown = (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); openEntry(e.seq); } };
      return tr;
    });
    $("entry-table").tBodies[0].replaceChildren(...rows);
    const pages = Math.max(1, Math.ceil(p.total / PAGE));
    const at = Math.floor(p.offset / PAGE) + 1;
    $("page-info").textContent = p.total === 0 ? "No entries yet" :
      `Page ${at.toLocaleString("en")} of ${pages.toLocaleString("en")} · seq ${p.offset + 1} to ${p.offset + p.entries.length} of ${p.total.toLocaleString("en")}`;
    $("page-first").disabled = $("page-prev").disabled = p.offset === 0;
    $("page-next").disabled = $("page-last").disabled = !p.pagination.has_more;
  }

  function lastOffset() {
    return Math.max(0, Math.floor((page.total - 1) / PAGE) * PAGE);
  }

  async function openEntry(seq) {
    for (const tr of $("entry-table").tBodies[0].rows) tr.setAttribute("aria-selected", String(tr.dataset.seq === String(seq)));
    const box = $("entry-detail");
    box.hidden = false;
    $("entry-detail-title").textContent = `Entry ${seq}`;
    try {
      const e = await api("GET", `/api/chain/${seq}`);
      const meta = [];
      for (const [k, v] of [["time", e.time], ["span", `${e.span_name} (${e.span_kind})`], ["trace_id", e.trace_id], ["span_id", e.span_id],
        ["canonical_hash", e.canonical_hash], ["prev_hash", e.prev_hash], ["hmac_hash", e.hmac_hash]]) {
        meta.push(node("dt", "", k), node("dd", "hash", v));
      }
      $("entry-detail-meta").replaceChildren(...meta);
      $("entry-detail-body").textContent = e.body === null ? "(the stored body is not JSON)" : JSON.stringify(e.body, null, 2);
    } catch (err) {
      $("entry-detail-meta").replaceChildren();
      $("entry-detail-body").textContent = err.message;
    }
  }

  async function goToSeq(seq) {
    const offset = Math.floor((seq - 1) / PAGE) * PAGE;
    await loadPage(offset).catch((err) => status(err.message));
    await openEntry(seq);
    $("entries").scrollIntoView();
  }

  // Regression charts, one per dimension, each from a bounded series.
  async function loadRegression() {
    const charts = $("charts");
    if (!hasRun) {
      // The layers said no run is saved: the series would all be 404.
      $("regression-info").textContent = "No regression run yet: run one now.";
      return;
    }
    let first = true;
    const results = await Promise.allSettled(DIMENSIONS.map(([dim]) => api("GET", `/api/regression/series?dimension=${dim}&points=${POINTS}`)));
    const figs = [];
    for (let i = 0; i < results.length; i++) {
      const r = results[i];
      if (r.status === "rejected") {
        if (r.reason.status === 404) {
          $("regression-info").textContent = "No regression run yet: run one now.";
          charts.replaceChildren();
          return;
        }
        figs.push(node("p", "bad", `${DIMENSIONS[i][1]}: ${r.reason.message}`));
        continue;
      }
      const s = r.value;
      if (first) {
        $("regression-info").textContent = `Run ${s.run_id} at ${s.ran_at} over seq ${s.first_seq} to ${s.last_seq}, z threshold ${s.z_threshold}.`;
        first = false;
      }
      figs.push(seriesChart(DIMENSIONS[i][1], s));
    }
    charts.replaceChildren(...figs);
  }

  function seriesChart(title, s) {
    const t = `${title} (${s.unit})`;
    if (s.points.length === 0 || s.status !== "ok") {
      const fig = node("figure");
      fig.append(node("figcaption", "", t), node("p", "muted", s.points.length === 0 ? "No values in the window." :
        `Only ${s.points.reduce((n, p) => n + p.n, 0)} values: too few to test.`));
      return fig;
    }
    const top = s.anomalies_z[0];
    const summary = `${s.points.length} points over seq ${s.first_seq} to ${s.last_seq}; mean ${fmt(s.mean)} ${s.unit}, ` +
      `fences ${fmt(s.lower_fence)} to ${fmt(s.upper_fence)} ${s.unit}; ${s.anomalies_z_total} z anomalies` +
      (top ? ` (largest at seq ${top.seq}, ${fmt(top.value)} ${s.unit}, z ${top.z.toFixed(2)})` : "") +
      `, ${s.anomalies_iqr_total} IQR anomalies` + (s.anomalies_iqr[0] ? ` (farthest at seq ${s.anomalies_iqr[0].seq})` : "") + ".";
    return CairnCharts.lineChart({ title: t, unit: s.unit, first: s.first_seq, last: s.last_seq, points: s.points,
      fences: [s.lower_fence, s.upper_fence], z: s.anomalies_z, iqr: s.anomalies_iqr,
      zTotal: s.anomalies_z_total, iqrTotal: s.anomalies_iqr_total, summary });
  }

  async function runRegression(ev) {
    ev.preventDefault();
    const window = Number($("regression-window").value) || 0;
    $("regression-info").textContent = "Running…";
    try {
      await api("POST", "/api/regression/run", window ? { window } : {});
      hasRun = true;
      await loadRegression();
    } catch (err) {
      $("regression-info").textContent = err.message;
    }
  }

  // Energy and CO2 by model and by region.
  const MAX_BARS = 12;

  function energyRows(groups) {
    const rows = Object.entries(groups).map(([name, g]) => ({ label: name || "(none)", a: g.wh, b: g.co2_grams, calls: g.calls }))
      .sort((x, y) => y.a - x.a);
    if (rows.length <= MAX_BARS) return rows;
    const rest = rows.slice(MAX_BARS - 1);
    const other = { label: `${rest.length} others`, a: 0, b: 0, calls: 0 };
    for (const r of rest) { other.a += r.a; other.b += r.b; other.calls += r.calls; }
    return rows.slice(0, MAX_BARS - 1).concat([other]);
  }

  async function loadEnergy() {
    const e = await api("GET", "/api/energy/summary");
    $("energy-info").textContent = `${e.total_calls.toLocaleString("en")} calls with token counts: ${fmt(e.total_wh)} Wh, ${fmt(e.total_co2_grams)} g CO₂` +
      (e.fallback_calls ? `; ${e.fallback_calls} used a default rate or intensity.` : ".");
    const figs = [["By model", e.by_model], ["By region", e.by_region]].filter(([, g]) => Object.keys(g).length > 0).map(([title, g]) => {
      const rows = energyRows(g);
      const summary = rows.map((r) => `${r.label}: ${fmt(r.a)} Wh, ${fmt(r.b)} g CO₂, ${r.calls} calls`).join("; ") + ".";
      return CairnCharts.pairedBars({ title: `Energy and CO₂ ${title.toLowerCase()}`, rows, a: { name: "energy", unit: "Wh" }, b: { name: "CO₂", unit: "g" }, summary });
    });
    $("energy-charts").replaceChildren(...figs);
  }

  // Replay and policy forms.
  async function checkReplay(ev) {
    ev.preventDefault();
    try {
      const r = await api("POST", "/api/replay/verify", { seq: Number($("replay-seq").value), replayed_output: $("replay-output").value });
      const dl = node("dl", "meta");
      for (const [k, v] of [["reason_code", r.reason_code], ["model", r.model], ["model_version", r.model_version], ["deterministic", r.deterministic],
        ["original_hash", r.original_hash], ["replay_hash", r.replay_hash]]) {
        dl.append(node("dt", "", k), node("dd", "hash", v === null ? "none" : v));
      }
      show("replay-result", verdict(r.match, r.match ? `Match: the replayed output is the recorded one (seq ${r.seq}).` : `No match: ${r.reason}`), dl);
    } catch (err) {
      failed("replay-result", err);
    }
  }

  async function evaluatePolicy(ev) {
    ev.preventDefault();
    const messages = [];
    if ($("policy-system").value) messages.push({ role: "system", content: $("policy-system").value });
    messages.push({ role: "user", content: $("policy-user").value });
    try {
      const body = { messages };
      if ($("policy-model").value) body.model = $("policy-model").value;
      const r = await api("POST", "/api/policy/evaluate", body);
      const out = [verdict(!r.denied, r.denied ? `Denied by ${r.deny_rule}: ${r.deny_reason}` : `Allowed (${r.rules_evaluated} rules, ${r.evaluation_ms} ms)`)];
      const list = node("ul");
      for (const v of r.violations || []) {
        list.append(node("li", "", `${v.rule} (${v.mode}): ${v.message}` + (v.matches || []).map((m) => ` · ${m.category} “${m.masked}”`).join("")));
      }
      for (const w of r.warnings || []) list.append(node("li", "", `warning ${w.rule}: ${w.reason}`));
      if (list.children.length) out.push(list);
      show("policy-result", ...out);
    } catch (err) {
      failed("policy-result", err);
    }
  }

  // Layers.
  async function loadLayers() {
    const l = await api("GET", "/api/layers");
    const reg = l.layers.find((x) => x.name === "regression");
    hasRun = Boolean(reg && reg.state === "active");
    $("layer-list").replaceChildren(...l.layers.map((x) => {
      const li = node("li");
      li.append(node("strong", "", x.name), node("span", "badge " + x.state, x.state), node("span", "note muted", x.detail));
      return li;
    }));
  }

  function status(s) {
    $("status").textContent = s;
  }

  function wire() {
    $("verify-smoke").onclick = () => verify(false);
    $("verify-full").onclick = () => verify(true);
    $("page-first").onclick = () => loadPage(0).catch((e) => status(e.message));
    $("page-prev").onclick = () => loadPage(Math.max(0, page.offset - PAGE)).catch((e) => status(e.message));
    $("page-next").onclick = () => loadPage(page.offset + PAGE).catch((e) => status(e.message));
    $("page-last").onclick = () => loadPage(lastOffset()).catch((e) => status(e.message));
    $("seq-form").onsubmit = (ev) => { ev.preventDefault(); const n = Number($("seq-input").value); if (n >= 1) goToSeq(n); };
    $("regression-form").onsubmit = runRegression;
    $("replay-form").onsubmit = checkReplay;
    $("policy-form").onsubmit = evaluatePolicy;
  }

  async function start() {
    wire();
    status("Loading…");
    // The first request finds out whether a key is needed, so that the others do not all
    // meet a 401 at once.
    try {
      await loadLayers();
    } catch (err) {
      status(err.message);
      return;
    }
    const results = await Promise.allSettled([loadStats(), loadPage(0), loadRegression(), loadEnergy()]);
    const errs = results.filter((r) => r.status === "rejected").map((r) => r.reason.message);
    status(errs.length ? "Some sections failed: " + errs.join("; ") : "");
    document.body.dataset.loaded = "true";
  }

  start();
})();
