// redoc.js: the /redoc page, a read-only reference of /openapi.json: a sidebar of
// operations and schemas, each operation described in the middle column, with an example
// request and answer beside it.
"use strict";

(() => {
  const { h } = Cairn;
  const sidebar = document.getElementById("sidebar");
  const content = document.getElementById("content");
  const schemaLink = (name) => `#schema-${name}`;

  function row(cls, id, main, aside) {
    return h("section", { class: `row ${cls}`, id }, h("div", { class: "main" }, main), h("div", { class: "aside" }, aside));
  }

  function opID(op, method, path) {
    return `op-${op.operationId || `${method}-${path}`}`;
  }

  // exampleRequest is a curl command for the operation, with example values.
  function exampleRequest(spec, method, path, op) {
    let url = path;
    const headers = {};
    for (const p of op.parameters || []) {
      const ex = Cairn.example(spec, p.schema, true);
      if (p.in === "path") url = url.replace(`{${p.name}}`, String(ex === "string" ? p.name : ex));
      if (p.in === "header") headers[p.name] = `$${p.name.toUpperCase().replace(/-/g, "_")}`;
    }
    if (Cairn.secured(op)) headers.Authorization = "Bearer $CAIRN_API_KEY";
    const content = (op.requestBody && op.requestBody.content) || {};
    let body = "";
    if (content["application/json"]) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(Cairn.example(spec, content["application/json"].schema, false));
    }
    let line = Cairn.curlLine(method.toUpperCase(), `${location.origin}${url}`, headers, body);
    if (content["multipart/form-data"]) line += " -F 'file=@cairn-chain-1-100.json'";
    return line;
  }

  // successOf returns the first 2xx answer of an operation with its content type.
  function successOf(op) {
    for (const [code, r] of Object.entries(op.responses || {})) {
      if (code.startsWith("2")) {
        const [type, media] = Object.entries(r.content || {})[0] || [];
        return { code, type, schema: media && media.schema };
      }
    }
    return null;
  }

  function operationRow(spec, { method, path, op }) {
    const main = [
      h("h3", null, op.summary || path),
      h("div", { class: "endpoint" }, Cairn.methodBadge(method), Cairn.pathNode(path), Cairn.secured(op) ? Cairn.lockBadge() : null),
      op.description ? h("p", { class: "desc" }, op.description) : null,
    ];
    if (op.parameters && op.parameters.length) main.push(h("h4", null, "Parameters"), Cairn.paramsTable(spec, op.parameters));
    const content = (op.requestBody && op.requestBody.content) || {};
    for (const [type, media] of Object.entries(content)) {
      main.push(h("h4", null, `Request body · ${type}`), Cairn.propsTable(spec, media.schema, schemaLink));
    }
    main.push(h("h4", null, "Responses"));
    for (const [code, r] of Object.entries(op.responses || {})) {
      const media = Object.entries(r.content || {});
      main.push(h("div", { class: "response" },
        h("span", { class: Cairn.statusClass(code) }, code), r.description || "",
        media.length ? h("div", { class: "type" }, media.map(([type, m], i) =>
          h("span", null, i ? ", " : "", `${type}: `, Cairn.typeNode(spec, m.schema, schemaLink)))) : null));
    }
    const aside = [h("h5", null, "Request"), h("pre", { class: "wrap" }, exampleRequest(spec, method, path, op))];
    const ok = successOf(op);
    if (ok && ok.type === "application/json" && ok.schema) {
      aside.push(h("h5", null, `Response ${ok.code}`), Cairn.jsonNode(Cairn.example(spec, ok.schema, false)));
    } else if (ok) {
      aside.push(h("h5", null, `Response ${ok.code}`), h("pre", null, ok.type || "no body"));
    }
    return row("op-row", opID(op, method, path), main, aside);
  }

  function schemaRow(spec, name, s) {
    return row("schema-row", `schema-${name}`,
      [h("h3", null, h("code", null, name)), s.description ? h("p", { class: "desc" }, s.description) : null, Cairn.propsTable(spec, s, schemaLink)],
      [h("h5", null, "Example"), Cairn.jsonNode(Cairn.example(spec, s, false))]);
  }

  function introRow(spec) {
    const schemes = Object.entries((spec.components && spec.components.securitySchemes) || {});
    const anySecured = Object.values(spec.paths || {}).some((item) => Object.values(item).some(Cairn.secured));
    const main = [
      h("h1", null, spec.info.title),
      h("p", { class: "desc" }, spec.info.description || ""),
      h("h4", null, "Authentication"),
      anySecured
        ? h("p", null, "Operations marked ", Cairn.lockBadge(), " need the API key as a bearer token: ",
          h("code", null, "Authorization: Bearer <key>"), ". Without it they answer 401.")
        : h("p", null, "This server was started without an API key: every operation is open."),
      schemes.map(([name, s]) => h("p", { class: "muted" }, h("code", null, name), ` - ${s.type} ${s.scheme || ""}. ${s.description || ""}`)),
      h("h4", null, "Errors"),
      h("p", null, "Every answer other than 2xx is JSON: ", h("code", null, "{\"error\": \"...\", \"code\": \"...\"}"), " (see ",
        h("a", { href: schemaLink("Error") }, "Error"), ")."),
    ];
    const aside = [h("h5", null, "Base URL"), h("pre", null, location.origin),
      h("h5", null, "OpenAPI document"), h("pre", { class: "wrap" }, h("a", { href: "/openapi.json" }, `${location.origin}/openapi.json`))];
    return row("intro", "top", main, aside);
  }

  function render(spec) {
    document.getElementById("version").textContent = spec.info.version;
    document.title = `${spec.info.title} - reference`;
    const groups = Cairn.operations(spec);
    const schemas = Object.entries((spec.components && spec.components.schemas) || {}).sort(([a], [b]) => a.localeCompare(b));

    // An operation is listed by its summary, or by its path when another shares the summary.
    const summaries = new Map();
    for (const g of groups) for (const o of g.ops) summaries.set(o.op.summary, (summaries.get(o.op.summary) || 0) + 1);
    const nav = [];
    for (const g of groups) {
      nav.push(h("h3", null, g.name));
      for (const o of g.ops) {
        const label = o.op.summary && summaries.get(o.op.summary) === 1 ? o.op.summary : o.path;
        nav.push(h("a", { href: `#${opID(o.op, o.method, o.path)}`, title: `${o.method.toUpperCase()} ${o.path}` },
          h("span", { class: `m ${o.method}` }, o.method.toUpperCase()), h("span", { class: "s" }, label)));
      }
    }
    nav.push(h("h3", null, "Schemas"));
    for (const [name] of schemas) nav.push(h("a", { href: schemaLink(name) }, h("span", { class: "s" }, name)));
    sidebar.replaceChildren(...nav);

    const rows = [introRow(spec)];
    for (const g of groups) {
      rows.push(row("tag-head", `tag-${g.name}`, [h("h2", null, g.name), g.description ? h("p", { class: "muted" }, g.description) : null], null));
      for (const o of g.ops) rows.push(operationRow(spec, o));
    }
    rows.push(row("tag-head", "schemas", [h("h2", null, "Schemas"), h("p", { class: "muted" }, "The bodies the operations take and give.")], null));
    for (const [name, s] of schemas) rows.push(schemaRow(spec, name, s));
    content.replaceChildren(...rows);
    if (location.hash) {
      const target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
      if (target) target.scrollIntoView();
    }
  }

  Cairn.loadSpec().then(render).catch((err) => Cairn.showFailure(content, err));
})();
