// Package e2e runs the cairn binary as a user would, against real processes: the local
// control plane of `cairn dev`, and later the federation and the chain service.
package e2e
