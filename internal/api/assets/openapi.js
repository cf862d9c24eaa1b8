// openapi.js: what /docs and /redoc share: loading /openapi.json, resolving its schemas,
// making example values, and building the DOM for paths, types and property tables.
// Every text from the document is set with textContent, never parsed as HTML.
"use strict";

const Cairn = (() => {
  const REF_PREFIX = "#/components/schemas/";

  // h builds an element: h("a", {href: "#x", class: "y"}, "text", child, ...).
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") el.className = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat(Infinity)) {
      if (c === undefined || c === null || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }

  async function loadSpec() {
    const resp = await fetch("/openapi.json", { headers: { Accept: "application/json" } });
    if (!resp.ok) throw new Error(`GET /openapi.json answered ${resp.status}`);
    return resp.json();
  }

  // refName is the component a schema refers to, directly or through allOf, or "".
  function refName(s) {
    if (!s) return "";
    if (s.$ref) return s.$ref.slice(REF_PREFIX.length);
    if (s.allOf && s.allOf.length === 1) return refName(s.allOf[0]);
    return "";
  }

  // resolve follows $ref and single-element allOf to the schema itself.
  function resolve(spec, s) {
    for (let i = 0; s && i < 16; i++) {
      const name = refName(s);
      if (!name) return s;
      s = spec.components.schemas[name];
    }
    return s || {};
  }

  // typeLabel describes a schema's type in a few words.
  function typeLabel(spec, s) {
    const name = refName(s);
    if (name) return name;
    s = s || {};
    if (s.type === "array") return `array of ${typeLabel(spec, s.items)}`;
    if (s.type === "object" && s.additionalProperties) return `map of ${typeLabel(spec, s.additionalProperties)}`;
    if (!s.type) return "any JSON";
    let t = s.type;
    if (s.format) t += ` <${s.format}>`;
    if (s.nullable) t += " | null";
    return t;
  }

  // typeNode is typeLabel as a node; component names link to their schema when linkTo is given.
  function typeNode(spec, s, linkTo) {
    const name = refName(s);
    if (name && linkTo) return h("a", { href: linkTo(name) }, name);
    if (s && s.type === "array" && refName(s.items) && linkTo) {
      return h("span", null, "array of ", h("a", { href: linkTo(refName(s.items)) }, refName(s.items)));
    }
    return typeLabel(spec, s);
  }

  // example makes a value of schema s: its example, default or first enum value, else
  // one built from its type. Optional members are left out when skipOptional is set.
  function example(spec, s, skipOptional, depth = 0) {
    s = resolve(spec, s);
    if (s.example !== undefined) return s.example;
    if (s.default !== undefined) return s.default;
    if (s.enum && s.enum.length) return s.enum[0];
    if (depth > 6) return null;
    switch (s.type) {
      case "object": {
        if (!s.properties) return {};
        const out = {};
        for (const [k, v] of Object.entries(s.properties)) {
          if (skipOptional && !(s.required || []).includes(k)) continue;
          out[k] = example(spec, v, skipOptional, depth + 1);
        }
        return out;
      }
      case "array": return [example(spec, s.items, skipOptional, depth + 1)];
      case "integer": return s.minimum !== undefined ? s.minimum : 0;
      case "number": return 0.5;
      case "boolean": return false;
      case "string":
        if (s.format === "date-time") return "2026-11-21T12:00:00Z";
        if (s.format === "byte") return "eyJuYW1lIjoiY2hhdCJ9";
        if (s.format === "binary") return "<file>";
        return "string";
      default: return null;
    }
  }

  // operations lists the document's operations grouped by tag, in the tags' order.
  function operations(spec) {
    const groups = (spec.tags || []).map((t) => ({ name: t.name, description: t.description || "", ops: [] }));
    const byName = new Map(groups.map((g) => [g.name, g]));
    for (const [path, item] of Object.entries(spec.paths || {})) {
      for (const [method, op] of Object.entries(item)) {
        const tag = (op.tags && op.tags[0]) || "other";
        if (!byName.has(tag)) {
          const g = { name: tag, description: "", ops: [] };
          groups.push(g);
          byName.set(tag, g);
        }
        byName.get(tag).ops.push({ method, path, op });
      }
    }
    for (const g of groups) g.ops.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
    return groups.filter((g) => g.ops.length);
  }

  function methodBadge(method) {
    return h("span", { class: `method ${method}` }, method.toUpperCase());
  }

  // pathNode shows a path with its {parameters} highlighted.
  function pathNode(path) {
    const el = h("code", { class: "path" });
    for (const part of path.split(/(\{[^}]+\})/)) {
      if (part) el.append(part.startsWith("{") ? h("span", { class: "param" }, part) : part);
    }
    return el;
  }

  function secured(op) {
    return Array.isArray(op.security) && op.security.length > 0;
  }

  function lockBadge() {
    return h("span", { class: "lock", title: "needs the API key: Authorization: Bearer <key>" }, "API key");
  }

  function statusClass(code) {
    return `status s${String(code)[0] === "d" ? "default" : String(code)[0]}`;
  }

  // propsTable lists the members of an object schema, nested objects indented below their
  // member. linkTo, when given, makes component names links.
  function propsTable(spec, s, linkTo) {
    const body = h("tbody");
    const seen = new Set();
    const addRows = (schema, depth) => {
      const name = refName(schema);
      if (name) {
        if (seen.has(name)) return;
        seen.add(name);
      }
      const obj = resolve(spec, schema);
      const required = obj.required || [];
      for (const [k, v] of Object.entries(obj.properties || {})) {
        const p = resolve(spec, v);
        const desc = h("td", { class: "desc" }, v.description || p.description || "");
        if (p.enum) desc.append(h("span", { class: "enum" }, "one of ", p.enum.map((e) => h("code", null, String(e)))));
        if (p.default !== undefined) desc.append(h("span", { class: "enum" }, "default ", h("code", null, JSON.stringify(p.default))));
        body.append(h("tr", { class: depth ? `nested depth-${Math.min(depth, 3)}` : "" },
          h("td", { class: "name" }, h("code", null, k), required.includes(k) ? h("span", { class: "required" }, "required") : null),
          h("td", null, h("span", { class: "type" }, typeNode(spec, v, linkTo))),
          desc));
        const inner = refName(v) ? v : (p.type === "array" ? p.items : null);
        if (depth < 2 && inner && resolve(spec, inner).properties && !linkTo) addRows(inner, depth + 1);
      }
    };
    addRows(s, 0);
    if (!body.children.length) {
      return h("p", { class: "muted" }, typeLabel(spec, s), s && s.description ? ` - ${s.description}` : "");
    }
    return h("table", { class: "props" },
      h("thead", null, h("tr", null, h("th", null, "Name"), h("th", null, "Type"), h("th", null, "Description"))),
      body);
  }

  // paramsTable lists an operation's parameters.
  function paramsTable(spec, params) {
    return h("table", { class: "props" },
      h("thead", null, h("tr", null, h("th", null, "Name"), h("th", null, "In"), h("th", null, "Type"), h("th", null, "Description"))),
      h("tbody", null, params.map((p) => {
        const s = p.schema || {};
        const desc = h("td", { class: "desc" }, p.description || "");
        const limits = [];
        if (s.minimum !== undefined) limits.push(`min ${s.minimum}`);
        if (s.maximum !== undefined) limits.push(`max ${s.maximum}`);
        if (s.default !== undefined) limits.push(`default ${s.default}`);
        if (limits.length) desc.append(h("span", { class: "enum" }, limits.join(", ")));
        return h("tr", null,
          h("td", { class: "name" }, h("code", null, p.name), p.required ? h("span", { class: "required" }, "required") : null),
          h("td", { class: "muted" }, p.in),
          h("td", null, h("span", { class: "type" }, typeLabel(spec, s))),
          desc);
      })));
  }

  // jsonNode pretty-prints a value with coloured keys, strings, numbers and literals.
  function jsonNode(value) {
    const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
    const pre = h("pre");
    const token = /("(?:[^"\\]|\\.)*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|\b(true|false|null)\b/g;
    let last = 0;
    for (let m; (m = token.exec(text)) !== null;) {
      pre.append(text.slice(last, m.index));
      if (m[1]) pre.append(h("span", { class: m[2] ? "j-key" : "j-str" }, m[1]), m[2] || "");
      else if (m[3]) pre.append(h("span", { class: "j-num" }, m[3]));
      else pre.append(h("span", { class: "j-lit" }, m[4]));
      last = token.lastIndex;
    }
    pre.append(text.slice(last));
    return pre;
  }

  // curlLine is a curl command for a request.
  function curlLine(method, url, headers, body) {
    const q = (s) => `'${String(s).replace(/'/g, "'\\''")}'`;
    const parts = ["curl", "-sS"];
    if (method !== "GET") parts.push("-X", method);
    for (const [k, v] of Object.entries(headers || {})) parts.push("-H", q(`${k}: ${v}`));
    if (body !== undefined && body !== null && body !== "") parts.push("-d", q(body));
    parts.push(q(url));
    return parts.join(" ");
  }

  function showFailure(container, err) {
    container.replaceChildren(h("p", { class: "failure" }, `Could not load the API description: ${err.message}`));
  }

  return {
    h, loadSpec, refName, resolve, typeLabel, typeNode, example, operations, methodBadge, pathNode,
    secured, lockBadge, statusClass, propsTable, paramsTable, jsonNode, curlLine, showFailure,
  };
})();
