// Package audit ties the exports of a cross-anchor's participants to the anchor, as an
// outsider checks it: which operator signed each export (its registered key, or a key it
// rotated to, proved by the federation's logged rotation records: Records), and whether
// the receipt binds the export's chain_signature, or binds a later head that the export's
// segment leads to. It is pure: the caller verifies the receipt and the exports
// (protocol.VerifyReceiptWith, protocol.VerifyExport), fetches the records, and reads the
// log; nothing here touches the network.
//
// A Report holds every check and its verdict: passed only when every check made holds
// and nothing was left unchecked; partial when nothing failed but something (a
// participant without an export, an export no record ties) was not checked.
package audit
