package webhook

// The body of POST /federation/submit as the OpenAPI document describes it. The server
// never decodes into these types: it reads the export as a stream with protocol's reader
// (docs/PROTOCOL.md §3 has the rules, which are stricter than a schema can say).

// exportBody is a cairn-chain-v2 export: the header members, the entries and the
// envelope signature over the header's RFC 8785 JSON. Members may come in any order.
type exportBody struct {
	Format         string          `json:"format" doc:"Always cairn-chain-v2." example:"\"cairn-chain-v2\""`
	Version        int             `json:"version" doc:"Always 2." example:"2"`
	ExportedAt     string          `json:"exported_at" doc:"RFC 3339 UTC in whole seconds." example:"\"2026-11-24T07:00:00Z\""`
	EntryCount     int64           `json:"entry_count" doc:"Entries in the chain through last_seq: equal to last_seq."`
	FirstSeq       int64           `json:"first_seq"`
	LastSeq        int64           `json:"last_seq"`
	FirstPrevHash  string          `json:"first_prev_hash" doc:"The first entry's prev_hash: 64 zeros for seq 1, else the previous entry's hmac_hash."`
	LastHMACHash   string          `json:"last_hmac_hash"`
	ChainSignature string          `json:"chain_signature" doc:"HMAC-SHA256(secret, \"chain:\" ‖ last_hmac_hash ‖ \":\" ‖ entry_count), hex."`
	EntriesRoot    string          `json:"entries_root" doc:"RFC 6962 root over the exported entries' leaves, hex."`
	Entries        []exportEntry   `json:"entries" doc:"The entries first_seq..last_seq in order; absent or empty for a header-only export."`
	Signature      exportSignature `json:"signature"`
}

// exportEntry is one chain row as exported.
type exportEntry struct {
	Seq              int64  `json:"seq"`
	TimestampNS      string `json:"timestamp_ns" doc:"Decimal nanoseconds since the Unix epoch."`
	TraceID          string `json:"trace_id"`
	SpanID           string `json:"span_id"`
	SpanName         string `json:"span_name"`
	SpanKind         string `json:"span_kind"`
	CanonicalBodyB64 string `json:"canonical_body_b64" doc:"Standard base64 of the body's RFC 8785 JSON."`
	CanonicalHash    string `json:"canonical_hash" doc:"Hex SHA-256 of the canonical body."`
	PrevHash         string `json:"prev_hash"`
	HMACHash         string `json:"hmac_hash" doc:"Hex HMAC-SHA256(secret, prev_hash ‖ canonical_hash)."`
}

// exportSignature is the envelope signature.
type exportSignature struct {
	Algorithm string `json:"algorithm" doc:"Always Ed25519." example:"\"Ed25519\""`
	PublicKey string `json:"public_key" doc:"The operator's current key, SPKI PEM."`
	Value     string `json:"value" doc:"Base64 Ed25519 signature over the header members' RFC 8785 JSON."`
}
