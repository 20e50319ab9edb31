// Package jsonl is the one append path and the one reader for every JSONL file
// under .plasmodium/ (messages, events, inboxes, transcripts).
//
// Invariants:
//   - a record is appended as one whole line with one write call, under the
//     file's lockedfile lock; a torn tail left by a killed writer is terminated
//     before the next record so that record stays whole, and made invalid
//     (TornMarker) if it was a whole record minus its newline: a write never
//     acknowledged never comes back as a record;
//   - readers never fail on content: malformed, torn or oversized lines are
//     skipped and reported through a callback; an unterminated final line is
//     treated as not yet written; every reader agrees on which lines are
//     records (Next, Decode, Count): a valid JSON line whose values do not
//     fit the record's type is passed on with what fits, never dropped;
//   - a reader hands each line on in place, a slice of its read buffer (a
//     line longer than the buffer is copied, up to MaxLine): the slice, and
//     Decode's value, are valid during the callback only, and a caller that
//     keeps a line copies it (bus.Follower, ops.Chat);
//   - Tail reads backwards from the end and never parses the whole file;
//     LastRecords is ReadAll's last n records, its count and its bad-line
//     reports, decoding and holding only those n (a transcript's tail).
//   - Decode gives exactly what json.Unmarshal gives; a record type's own fast
//     decoder (LineDecoder, store.Message's) only claims lines it decodes the
//     same way and leaves the rest to encoding/json.
package jsonl
