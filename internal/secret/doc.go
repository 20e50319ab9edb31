// Package secret is pm's one secret policy: which environment variables are
// secret, which values are masked, and how text, event data and streams are
// masked.
//
// # Invariants
//
//   - One rule for secret variables: IsSecretEnv. A name is secret when it
//     contains KEY, TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE or
//     CREDENTIAL (case-insensitive), or is a provider variable pm knows
//     (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...). FilterEnv drops them from an
//     environment (what run_command passes on).
//   - One mask: every occurrence of every value of a Set becomes Masked
//     ("[masked]"), longer values first so a secret that contains another
//     is masked whole. Masking is exact-string: an encoded secret is not
//     caught.
//   - Every process masks what it knows: FromEnv collects the values of the
//     secret variables of its environment, and a host adds the provider key
//     it uses. Only Maskable values are masked, whoever adds them: at least
//     MinLen (8) bytes and not letters alone; a shorter value or a word
//     ("x", "ollama", dummy keys of local models) would corrupt ordinary
//     text ("suggested_fi[masked]") and guards nothing a real key is.
//   - Event data is masked like text (MaskValue, recursively through
//     structs, maps, slices and pointers, keeping the value's type: a bus
//     payload stays its struct); a value holding no secret is returned
//     unchanged, so data without secrets is written exactly as before.
//   - Streams: a Writer never passes on a secret even when it arrives split
//     across writes. A possible start of a secret at the end of a write is
//     held back until the next write settles it, or until Flush. MaskStream
//     is the same step for callers that keep the held text themselves (the
//     model loop's streamed deltas).
//   - A Set is a value: Add and With copy, so a Set handed to a Writer or a
//     goroutine does not change under it.
package secret
