// docs.js: the /docs page. Every operation of /openapi.json, grouped by tag, each with a
// form that sends the request (with the API key, if one is given) and shows the answer.
"use strict";

(() => {
  const { h } = Cairn;
  const container = document.getElementById("operations");
  const keyInput = document.getElementById("api-key");
  const filterInput = document.getElementById("filter");
  const KEY_STORE = "cairn-api-key";

  // The key is kept for this tab only, so a reload does not lose it.
  keyInput.value = sessionStorage.getItem(KEY_STORE) || "";
  keyInput.addEventListener("input", () => sessionStorage.setItem(KEY_STORE, keyInput.value));

  // field is one labelled input of a form.
  function field(label, note, input) {
    return h("div", { class: "field" }, h("label", null, label, note ? h("small", null, note) : null), input);
  }

  // requestBodyOf returns the content type and schema of an operation's request body.
  function requestBodyOf(op) {
    const content = (op.requestBody && op.requestBody.content) || {};
    const type = Object.keys(content)[0];
    return type ? { type, schema: content[type].schema || {}, required: !!op.requestBody.required } : null;
  }

  // tryForm builds the form that sends the operation.
  function tryForm(spec, method, path, op) {
    const inputs = [];
    const form = h("form", { class: "try", novalidate: true });
    form.append(h("h4", null, "Try it"));
    for (const p of op.parameters || []) {
      const ex = Cairn.example(spec, p.schema, true);
      const input = h("input", { type: "text", name: p.name, spellcheck: "false",
        value: p.in === "path" ? String(ex) : "", placeholder: p.in === "path" ? "" : (ex === "string" ? "" : String(ex)) });
      inputs.push({ param: p, input });
      form.append(field(p.name, `${p.in}${p.required ? ", required" : ""}`, input));
    }
    const body = requestBodyOf(op);
    let bodyInput = null;
    const parts = [];
    if (body && body.type === "application/json") {
      bodyInput = h("textarea", { spellcheck: "false", rows: 6 });
      bodyInput.value = JSON.stringify(Cairn.example(spec, body.schema, false), null, 2);
      form.append(field("body", "application/json", bodyInput));
    } else if (body && body.type === "multipart/form-data") {
      const s = Cairn.resolve(spec, body.schema);
      for (const [name, prop] of Object.entries(s.properties || {})) {
        const input = prop.format === "binary" ? h("input", { type: "file", name }) : h("textarea", { name, rows: 3, spellcheck: "false" });
        parts.push({ name, input });
        form.append(field(name, (s.required || []).includes(name) ? "form field, required" : "form field", input));
      }
    } else if (body) {
      bodyInput = h("input", { type: "file" });
      form.append(field("body", body.type, bodyInput));
    }
    const button = h("button", { class: "send", type: "submit" }, "Send");
    const curl = h("code", { class: "curl" });
    const result = h("div", { class: "result-holder" });
    form.append(h("div", { class: "actions" }, button, curl), result);
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      button.disabled = true;
      try {
        await send({ method: method.toUpperCase(), path, inputs, body, bodyInput, parts, curl, result });
      } finally {
        button.disabled = false;
      }
    });
    return form;
  }

  // send sends the request the form describes and shows the answer.
  async function send(req) {
    let url = req.path;
    const query = new URLSearchParams();
    const headers = {};
    for (const { param, input } of req.inputs) {
      const v = input.value.trim();
      if (param.in === "path") url = url.replace(`{${param.name}}`, encodeURIComponent(v));
      else if (param.in === "query" && v !== "") query.append(param.name, v);
      else if (param.in === "header" && v !== "") headers[param.name] = v;
    }
    if ([...query].length) url += `?${query}`;
    const shownHeaders = { ...headers };
    for (const k of Object.keys(shownHeaders)) if (/secret/i.test(k)) shownHeaders[k] = "$CAIRN_HMAC_SECRET";
    const key = keyInput.value.trim();
    if (key) {
      headers.Authorization = `Bearer ${key}`;
      shownHeaders.Authorization = "Bearer $CAIRN_API_KEY";
    }
    let body;
    let shownBody = "";
    if (req.body && req.body.type === "application/json") {
      body = req.bodyInput.value;
      shownBody = body.replace(/\s*\n\s*/g, " ");
      if (body.trim() !== "") {
        headers["Content-Type"] = "application/json";
        shownHeaders["Content-Type"] = "application/json";
      }
    } else if (req.body && req.body.type === "multipart/form-data") {
      body = new FormData();
      for (const { name, input } of req.parts) {
        if (input.type === "file") {
          if (input.files.length) body.append(name, input.files[0]);
        } else if (input.value !== "") {
          body.append(name, input.value);
        }
      }
    } else if (req.body && req.bodyInput.files.length) {
      body = req.bodyInput.files[0];
      headers["Content-Type"] = req.body.type;
    }
    req.curl.textContent = Cairn.curlLine(req.method, location.origin + url, shownHeaders, shownBody);
    const started = performance.now();
    let resp;
    try {
      resp = await fetch(url, { method: req.method, headers, body, credentials: "omit" });
    } catch (err) {
      req.result.replaceChildren(h("div", { class: "result" }, h("div", { class: "head" }, "request failed"), h("pre", null, String(err))));
      return;
    }
    const ms = Math.round(performance.now() - started);
    req.result.replaceChildren(await answerNode(resp, ms));
  }

  // answerNode shows an answer: status, time, a few headers, and the body.
  async function answerNode(resp, ms) {
    const head = h("div", { class: "head" },
      h("span", { class: Cairn.statusClass(resp.status) }, `${resp.status} ${resp.statusText}`),
      h("span", null, `${ms} ms`));
    for (const name of ["content-type", "content-disposition", "allow", "www-authenticate"]) {
      const v = resp.headers.get(name);
      if (v) head.append(h("span", null, `${name}: ${v}`));
    }
    const disposition = resp.headers.get("content-disposition") || "";
    if (disposition.startsWith("attachment")) {
      const blob = await resp.blob();
      const name = (disposition.match(/filename="([^"]+)"/) || [])[1] || "download";
      const link = h("a", { href: URL.createObjectURL(blob), download: name }, `Download ${name}`);
      return h("div", { class: "result" }, head, h("div", { class: "download" }, link, ` (${blob.size.toLocaleString()} bytes)`));
    }
    const text = await resp.text();
    let shown = text;
    if ((resp.headers.get("content-type") || "").includes("json")) {
      try {
        shown = JSON.parse(text);
      } catch {
        shown = text;
      }
    }
    return h("div", { class: "result" }, head, Cairn.jsonNode(shown));
  }

  // opNode is one operation: its summary line, and when opened its description, inputs,
  // answers and form.
  function opNode(spec, { method, path, op }) {
    const summary = h("summary", null, Cairn.methodBadge(method), Cairn.pathNode(path),
      Cairn.secured(op) ? Cairn.lockBadge() : null, h("span", { class: "summary" }, op.summary || ""));
    const details = h("details", { class: `op ${method}`, id: op.operationId || undefined, "data-search": `${method} ${path} ${op.summary || ""}`.toLowerCase() }, summary);
    let built = false;
    details.addEventListener("toggle", () => {
      if (!details.open || built) return;
      built = true;
      const body = h("div", { class: "op-body" });
      if (op.description) body.append(h("p", { class: "desc" }, op.description));
      if (op.parameters && op.parameters.length) body.append(h("h4", null, "Parameters"), Cairn.paramsTable(spec, op.parameters));
      const rb = requestBodyOf(op);
      if (rb) body.append(h("h4", null, `Request body (${rb.type})`), Cairn.propsTable(spec, rb.schema));
      body.append(h("h4", null, "Responses"));
      const list = h("div", { class: "responses-list" });
      for (const [code, r] of Object.entries(op.responses || {})) {
        const content = r.content ? Object.entries(r.content)[0] : null;
        list.append(h("span", { class: Cairn.statusClass(code) }, code),
          h("span", null, r.description || "", content ? h("span", { class: "type" }, `  ${content[0]}: ${Cairn.typeLabel(spec, content[1].schema)}`) : null));
      }
      body.append(list, tryForm(spec, method, path, op));
      details.append(body);
    });
    return details;
  }

  function render(spec) {
    document.getElementById("title").textContent = spec.info.title;
    document.getElementById("description").textContent = spec.info.description || "";
    document.getElementById("version").textContent = spec.info.version;
    document.title = `${spec.info.title} - API`;
    const groups = Cairn.operations(spec);
    container.replaceChildren(...groups.map((g) => h("section", { class: "tag", id: `tag-${g.name}` },
      h("h2", null, g.name, h("span", { class: "count" }, `${g.ops.length} operation${g.ops.length === 1 ? "" : "s"}`)),
      g.description ? h("p", null, g.description) : null,
      g.ops.map((o) => opNode(spec, o)))));
    const target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (target && target.tagName === "DETAILS") {
      target.open = true;
      target.scrollIntoView();
    }
  }

  filterInput.addEventListener("input", () => {
    const q = filterInput.value.trim().toLowerCase();
    for (const section of container.querySelectorAll("section.tag")) {
      let shown = 0;
      for (const d of section.querySelectorAll("details.op")) {
        const match = !q || d.dataset.search.includes(q);
        d.hidden = !match;
        if (match) shown++;
      }
      section.hidden = shown === 0;
    }
  });

  Cairn.loadSpec().then(render).catch((err) => Cairn.showFailure(container, err));
})();
