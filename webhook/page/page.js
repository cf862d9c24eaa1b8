// The federation's public page: the anchors' verify buttons, the key download, and the
// receipt box, which checks a receipt in this tab as docs/PROTOCOL.md §7 and `cairn
// federation verify` do: parse, participants_order (the seed form) or leaf_inclusion (the
// Merkle form, WebCrypto SHA-256), cross_anchor_hash, federation_signature (WebCrypto
// Ed25519) and trusted_key (the key is one this page publishes). Data is only ever
// written with textContent.
'use strict';

(() => {
  const $ = (sel) => document.querySelector(sel);

  // check appends one named check to list: state is ok, fail or skip.
  function check(list, name, state, text) {
    const li = document.createElement('li');
    li.className = state;
    li.dataset.check = name;
    li.dataset.state = state;
    const b = document.createElement('strong');
    b.textContent = name;
    li.append(b, ': ' + text);
    list.append(li);
  }

  // ---- Verify buttons: GET /federation/verify/{id}, each check shown.
  for (const btn of document.querySelectorAll('button.verify')) {
    btn.addEventListener('click', async () => {
      const list = btn.nextElementSibling;
      list.replaceChildren();
      btn.disabled = true;
      try {
        const res = await fetch('/federation/verify/' + encodeURIComponent(btn.dataset.anchor), { headers: { Accept: 'application/json' } });
        const body = await res.json();
        if (!res.ok) {
          check(list, 'request', 'fail', body.message || String(res.status));
          return;
        }
        check(list, 'valid', body.valid ? 'ok' : 'fail', body.valid ? 'every check passed' : 'a check failed');
        for (const [name, ok] of Object.entries(body.checks || {})) {
          check(list, name, ok ? 'ok' : 'fail', ok ? 'ok' : 'failed');
        }
        if (body.reason) check(list, 'reason', 'fail', body.reason);
      } catch (e) {
        check(list, 'request', 'fail', String(e && e.message ? e.message : e));
      } finally {
        btn.disabled = false;
      }
    });
  }

  // ---- The federation key as a download (no request: a Blob of the shown PEM).
  const keyPEM = $('#federation-key') ? $('#federation-key').textContent : '';
  const keyURL = URL.createObjectURL(new Blob([keyPEM], { type: 'application/x-pem-file' }));
  for (const a of document.querySelectorAll('#download-key, #download-key-2')) {
    a.href = keyURL;
  }
  $('#download').hidden = false;

  // ---- The receipt box.

  // pemBody is the base64 of a PEM block, whitespace removed; '' when it is none.
  function pemBody(pem) {
    const m = /-----BEGIN PUBLIC KEY-----([A-Za-z0-9+/=\s]+)-----END PUBLIC KEY-----/.exec(pem);
    return m ? m[1].replace(/\s+/g, '') : '';
  }

  function b64Bytes(b64) {
    const bin = atob(b64);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }

  function hex(buf) {
    return Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('');
  }

  // byCodePoint orders strings by Unicode code point, as Python's sort_keys does.
  function byCodePoint(a, b) {
    const x = Array.from(a, (c) => c.codePointAt(0));
    const y = Array.from(b, (c) => c.codePointAt(0));
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      if (x[i] !== y[i]) return x[i] - y[i];
    }
    return x.length - y.length;
  }

  // quote writes s in the receipt form: \" \\ \n \r \t \b \f, every other character
  // outside 0x20..0x7e as \uxxxx (UTF-16 units, so astral characters as a pair).
  function quote(s) {
    const short = { 0x22: '\\"', 0x5c: '\\\\', 0x0a: '\\n', 0x0d: '\\r', 0x09: '\\t', 0x08: '\\b', 0x0c: '\\f' };
    let out = '"';
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (short[c]) out += short[c];
      else if (c < 0x20 || c > 0x7e) out += '\\u' + c.toString(16).padStart(4, '0');
      else out += s[i];
    }
    return out + '"';
  }

  // receiptForm is docs/PROTOCOL.md §1's receipt form of v: Python's json.dumps with
  // sort_keys and no whitespace. Numbers must be exact integers.
  function receiptForm(v) {
    if (v === null) return 'null';
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (typeof v === 'number') {
      if (!Number.isSafeInteger(v)) throw new Error('a number is not an exact integer');
      return String(v === 0 ? 0 : v);
    }
    if (typeof v === 'string') return quote(v);
    if (Array.isArray(v)) return '[' + v.map(receiptForm).join(',') + ']';
    return '{' + Object.keys(v).sort(byCodePoint).map((k) => quote(k) + ':' + receiptForm(v[k])).join(',') + '}';
  }

  // unsigned are the top-level members the payload leaves out: the Merkle form's leaf and
  // proof are bound through cross_anchor_hash's root instead.
  const unsigned = ['federation_signature', 'tlog_entry', 'leaf', 'inclusion_proof'];

  // payload is the signed bytes: every other top-level member, in the receipt form.
  function payload(r) {
    const signed = {};
    for (const k of Object.keys(r)) {
      if (!unsigned.includes(k)) signed[k] = r[k];
    }
    return new TextEncoder().encode(receiptForm(signed));
  }

  const merkleForm = 'merkle-v1';
  const operatorID = /^op_[0-9a-f]{16}$/;
  const hex64 = /^[0-9a-f]{64}$/;

  // exactly reports whether o is an object with exactly the members names.
  function exactly(o, names) {
    return o !== null && typeof o === 'object' && !Array.isArray(o) && Object.keys(o).sort().join() === names.slice().sort().join();
  }

  // integer reads an integer from min to 2^53-1, or throws naming what.
  function integer(v, min, what) {
    if (!Number.isSafeInteger(v) || v < min) throw new Error(what + ' is not an integer from ' + min + ' to 2^53-1');
    return v;
  }

  // hash32 reads a hash written as the canonical padded base64 of 32 bytes.
  function hash32(v, what) {
    if (typeof v !== 'string' || !/^[A-Za-z0-9+/]{43}=$/.test(v) || btoa(atob(v)) !== v) {
      throw new Error(what + ' is not the padded base64 of 32 bytes');
    }
    return b64Bytes(v);
  }

  // parseMerkle checks the Merkle form's leaf and inclusion_proof (docs/PROTOCOL.md §7).
  function parseMerkle(r) {
    if (r.anchor_form !== merkleForm) throw new Error('anchor_form is not ' + merkleForm + ' (absent for the seed form)');
    if ('participating_operators' in r) throw new Error('a receipt of the Merkle form lists no participating_operators');
    const l = r.leaf;
    if (!exactly(l, ['operator_id', 'chain_signature', 'last_seq']) || typeof l.operator_id !== 'string' || !operatorID.test(l.operator_id) ||
        typeof l.chain_signature !== 'string' || !hex64.test(l.chain_signature)) {
      throw new Error('leaf is not {operator_id, chain_signature, last_seq}');
    }
    integer(l.last_seq, 1, 'leaf.last_seq');
    const p = r.inclusion_proof;
    if (!exactly(p, ['leaf_index', 'tree_size', 'root_hash', 'hashes'])) throw new Error('inclusion_proof is not {leaf_index, tree_size, root_hash, hashes}');
    integer(p.tree_size, 1, 'inclusion_proof.tree_size');
    if (integer(p.leaf_index, 0, 'inclusion_proof.leaf_index') >= p.tree_size) throw new Error('inclusion_proof.leaf_index is not below tree_size');
    hash32(p.root_hash, 'inclusion_proof.root_hash');
    if (!Array.isArray(p.hashes) || p.hashes.length > 64) throw new Error('inclusion_proof.hashes is not an array of at most 64 hashes');
    p.hashes.forEach((h, i) => hash32(h, 'inclusion_proof.hashes[' + i + ']'));
  }

  async function sha256(...parts) {
    const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      all.set(p, at);
      at += p.length;
    }
    return new Uint8Array(await crypto.subtle.digest('SHA-256', all));
  }

  // included is RFC 9162 §2.1.3.2: whether path leads from the leaf hash at index of a
  // tree of size to root. Sizes reach 2^53-1, past JavaScript's 32-bit bit operators, so
  // it halves by division.
  async function included(leafHash, index, size, path, root) {
    let fn = index;
    let sn = size - 1;
    let h = leafHash;
    const half = (n) => Math.floor(n / 2);
    for (const p of path) {
      if (sn === 0) return false;
      if (fn % 2 === 1 || fn === sn) {
        h = await sha256(Uint8Array.of(1), p, h);
        while (fn % 2 === 0 && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      } else {
        h = await sha256(Uint8Array.of(1), h, p);
      }
      fn = half(fn);
      sn = half(sn);
    }
    return sn === 0 && h.length === root.length && h.every((b, i) => b === root[i]);
  }

  // checkMerkle runs leaf_inclusion and returns the Merkle form's cross_anchor_hash.
  async function checkMerkle(r, list) {
    const l = r.leaf;
    const p = r.inclusion_proof;
    const enc = new TextEncoder();
    const leafHash = await sha256(Uint8Array.of(0), enc.encode(receiptForm({ chain_signature: l.chain_signature, last_seq: l.last_seq, operator_id: l.operator_id })));
    const root = b64Bytes(p.root_hash);
    const ok = await included(leafHash, p.leaf_index, p.tree_size, p.hashes.map(b64Bytes), root);
    check(list, 'leaf_inclusion', ok ? 'ok' : 'fail', ok
      ? l.operator_id + ' at ' + p.leaf_index + ' of ' + p.tree_size + ' participants'
      : 'the inclusion proof does not lead from the leaf to root_hash');
    return hex(await sha256(enc.encode('cairn-merkle-anchor:v1\n' + hex(root) + '\n' + p.tree_size + '\n' + r.anchored_at)));
  }

  // parseReceipt reads text and checks the members' shapes; it throws what is wrong.
  function parseReceipt(text) {
    const r = JSON.parse(text);
    if (r === null || typeof r !== 'object' || Array.isArray(r)) throw new Error('not a JSON object');
    const str = (k) => {
      if (typeof r[k] !== 'string' || r[k] === '') throw new Error(k + ' is missing or not a string');
    };
    ['anchor_id', 'anchored_at', 'cross_anchor_hash', 'federation_public_key_pem', 'federation_signature'].forEach(str);
    if (!hex64.test(r.cross_anchor_hash)) throw new Error('cross_anchor_hash is not 64 lowercase hex');
    if ('anchor_form' in r) {
      parseMerkle(r);
    } else {
      if ('leaf' in r || 'inclusion_proof' in r) throw new Error('leaf and inclusion_proof belong to anchor_form ' + merkleForm + ', and the receipt has none');
      const ps = r.participating_operators;
      if (!Array.isArray(ps) || ps.length === 0) throw new Error('participating_operators is missing or empty');
      for (const p of ps) {
        if (!exactly(p, ['operator_id', 'chain_signature']) || typeof p.operator_id !== 'string' || typeof p.chain_signature !== 'string') {
          throw new Error('a participant is not {operator_id, chain_signature}');
        }
      }
    }
    const log = ['tlog_log_index', 'tlog_url', 'tlog_public_key_pem', 'tlog_record_public_key_pem'].filter((k) => k in r);
    if (log.length === 4) {
      const nulls = log.filter((k) => r[k] === null).length;
      if (nulls !== 0 && nulls !== 4) throw new Error('the log members are neither all null nor all set');
      if ((nulls === 0) !== ('tlog_entry' in r)) throw new Error('tlog_entry must be present exactly when the log members are set');
    }
    if (!pemBody(r.federation_public_key_pem)) throw new Error('federation_public_key_pem is not a PEM public key');
    return r;
  }

  // verifyReceipt runs every check on text and shows each in list; it reports whether
  // Ed25519 was unavailable.
  async function verifyReceipt(text, list) {
    let r;
    try {
      r = parseReceipt(text);
      check(list, 'parse', 'ok', 'a receipt of ' + r.anchor_id);
    } catch (e) {
      check(list, 'parse', 'fail', e.message);
      return false;
    }
    let sum;
    if (r.anchor_form === merkleForm) {
      sum = await checkMerkle(r, list);
    } else {
      const ids = r.participating_operators.map((p) => p.operator_id);
      const ordered = ids.every((id, i) => i === 0 || ids[i - 1] < id);
      check(list, 'participants_order', ordered ? 'ok' : 'fail',
        ordered ? 'operator IDs strictly ascend' : 'operator IDs do not strictly ascend');
      const input = r.participating_operators.map((p) => p.chain_signature).join('') + r.anchored_at;
      sum = hex(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(input)));
    }
    check(list, 'cross_anchor_hash', sum === r.cross_anchor_hash ? 'ok' : 'fail', sum === r.cross_anchor_hash ? 'recomputes'
      : r.anchor_form === merkleForm ? 'does not recompute from root_hash, tree_size and anchored_at' : 'does not recompute from the participants and anchored_at');

    let unsupported = false;
    try {
      const key = await crypto.subtle.importKey('spki', b64Bytes(pemBody(r.federation_public_key_pem)), { name: 'Ed25519' }, false, ['verify']);
      const sig = b64Bytes(r.federation_signature);
      const ok = sig.length === 64 && await crypto.subtle.verify({ name: 'Ed25519' }, key, sig, payload(r));
      check(list, 'federation_signature', ok ? 'ok' : 'fail',
        ok ? 'verifies under federation_public_key_pem' : 'does not verify over the payload under federation_public_key_pem');
    } catch (e) {
      if (e && e.name === 'NotSupportedError') {
        unsupported = true;
        check(list, 'federation_signature', 'skip', 'this browser has no Ed25519: run the command below');
      } else {
        check(list, 'federation_signature', 'fail', String(e && e.message ? e.message : e));
      }
    }

    const published = Array.from(document.querySelectorAll('#federation-key, .trusted-key'), (el) => pemBody(el.textContent));
    const trusted = published.includes(pemBody(r.federation_public_key_pem));
    check(list, 'trusted_key', trusted ? 'ok' : 'fail',
      trusted ? "the key is this federation's (its key history)" : 'the key is not one this federation published');
    if ('tlog_entry' in r) {
      check(list, 'tlog_entry', 'skip', 'the log proof is not checked in the browser: cairn federation verify checks it');
    } else {
      check(list, 'tlog_entry', 'skip', 'no log entry yet');
    }
    return unsupported;
  }

  const list = $('#receipt-checks');
  const fallback = $('#receipt-fallback');
  async function handle(file) {
    list.replaceChildren();
    fallback.hidden = true;
    list.dataset.done = '';
    delete list.dataset.file;
    const text = await file.text();
    const began = performance.now();
    try {
      const unsupported = await verifyReceipt(text, list);
      fallback.hidden = !unsupported;
    } catch (e) {
      check(list, 'parse', 'fail', String(e && e.message ? e.message : e));
    }
    list.dataset.ms = (performance.now() - began).toFixed(1);
    const failed = list.querySelector('li.fail');
    const unchecked = list.querySelector('li.skip[data-check="federation_signature"]');
    const state = failed ? 'fail' : unchecked ? 'skip' : 'ok';
    const verdict = document.createElement('li');
    verdict.className = state;
    verdict.dataset.check = 'verdict';
    verdict.dataset.state = state;
    verdict.textContent = failed ? 'The receipt does not verify: ' + failed.dataset.check + ' failed.'
      : unchecked ? 'The signature was not checked in this browser: run the command below.' : 'The receipt verifies.';
    list.append(verdict);
    list.dataset.done = state;
    list.dataset.file = file.name;
  }

  const input = $('#receipt-file');
  input.addEventListener('change', () => {
    if (input.files.length) handle(input.files[0]);
  });
  const zone = $('#dropzone');
  document.addEventListener('dragover', (e) => e.preventDefault());
  document.addEventListener('drop', (e) => e.preventDefault());
  zone.addEventListener('dragover', () => zone.classList.add('over'));
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (e) => {
    zone.classList.remove('over');
    if (e.dataTransfer && e.dataTransfer.files.length) handle(e.dataTransfer.files[0]);
  });
})();
