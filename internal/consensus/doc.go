// Package consensus asks several models the same question and measures how far their
// answers agree, and classifies how much is at stake in a prompt. It is the engine
// behind the local chain service's /api/consensus routes.
//
// # Providers
//
// A [Provider] completes a prompt with a named model. [OpenAIProvider] speaks the
// OpenAI-compatible chat-completions API (POST {base_url}/chat/completions), which
// hosted APIs and local servers alike offer. Each call runs under its context: a
// deadline or cancellation ends it. Responses are size-capped; non-2xx answers come back
// as an [*APIError] carrying the status and the server's own message.
//
// # Agreement
//
// [Evaluate] calls every model concurrently and compares each pair of answers with the
// cosine similarity of their word counts: both texts are lower-cased and split into
// runs of Unicode letters and digits, a short fixed list of English function words
// ("the", "is", "of", ...; never "not" or "no") is dropped, and
//
//	similarity(a, b) = Σ count_a(w)·count_b(w) / (√Σ count_a(w)² · √Σ count_b(w)²)
//
// computed in integers up to one final division, so equal inputs give bit-identical
// results. Two answers with no words left are identical (1); one empty and one not share
// nothing (0). The agreement score is the mean over all pairs of answers, in [0, 1]; the
// run reaches consensus when it is at least the threshold (0.7 by default). The best
// answer is the one with the highest mean similarity to the others (the first of them,
// in request order, on a tie). Word counts see vocabulary, not meaning: two answers that
// say "yes" and "no" at length about the same topic can score high, so the threshold
// suits factual questions with short answers better than essays.
//
// A model that fails is reported with its error and left out of the comparison; when
// fewer than two models answer, the verdict is insufficient_answers.
//
// # Stakes
//
// [ClassifyStakes] matches a text against a keyword table of domains (medical, legal,
// financial, safety, security): whole words or phrases, case-insensitive, in one pass
// over the text's words (linear time). Each keyword carries a level; the text's level is
// the highest matched (low when nothing matches). [Stakes] returns the table and what
// each level asks of a consensus run: how many models should answer, the agreement they
// should reach, and whether a person should review.
package consensus
