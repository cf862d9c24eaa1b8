// The federation's public page: the anchors' verify buttons, the key download, and the
// receipt box, which checks a receipt in this tab as docs/PROTOCOL.md §7 and `cairn
// federation verify` do: parse, participants_order, cross_anchor_hash,
// federation_signature (WebCrypto Ed25519) and trusted_key (the key is one this page
// publishes). Data is only ever written with textContent.
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

  // payload is the signed bytes: every top-level member but federation_signature and
  // tlog_entry, in the receipt form.
  function payload(r) {
    const signed = {};
    for (const k of Object.keys(r)) {
      if (k !== 'federation_signature' && k !== 'tlog_entry') signed[k] = r[k];
    }
    return new TextEncoder().encode(receiptForm(signed));
  }

  // parseReceipt reads text and checks the members' shapes; it throws what is wrong.
  function parseReceipt(text) {
    const r = JSON.parse(text);
    if (r === null || typeof r !== 'object' || Array.isArray(r)) throw new Error('not a JSON object');
    const str = (k) => {
      if (typeof r[k] !== 'string' || r[k] === '') throw new Error(k + ' is missing or not a string');
    };
    ['anchor_id', 'anchored_at', 'cross_anchor_hash', 'federation_public_key_pem', 'federation_signature'].forEach(str);
    if (!/^[0-9a-f]{64}$/.test(r.cross_anchor_hash)) throw new Error('cross_anchor_hash is not 64 lowercase hex');
    const ps = r.participating_operators;
    if (!Array.isArray(ps) || ps.length === 0) throw new Error('participating_operators is missing or empty');
    for (const p of ps) {
      if (p === null || typeof p !== 'object' || Object.keys(p).sort().join() !== 'chain_signature,operator_id' ||
          typeof p.operator_id !== 'string' || typeof p.chain_signature !== 'string') {
        throw new Error('a participant is not {operator_id, chain_signature}');
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
    const ids = r.participating_operators.map((p) => p.operator_id);
    const ordered = ids.every((id, i) => i === 0 || ids[i - 1] < id);
    check(list, 'participants_order', ordered ? 'ok' : 'fail',
      ordered ? 'operator IDs strictly ascend' : 'operator IDs do not strictly ascend');

    const input = r.participating_operators.map((p) => p.chain_signature).join('') + r.anchored_at;
    const sum = hex(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(input)));
    check(list, 'cross_anchor_hash', sum === r.cross_anchor_hash ? 'ok' : 'fail',
      sum === r.cross_anchor_hash ? 'recomputes' : 'does not recompute from the participants and anchored_at');

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
    try {
      const unsupported = await verifyReceipt(await file.text(), list);
      fallback.hidden = !unsupported;
    } catch (e) {
      check(list, 'parse', 'fail', String(e && e.message ? e.message : e));
    }
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
