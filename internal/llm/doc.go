// Package llm is pm's built-in model loop: it talks to any OpenAI-compatible
// chat completions endpoint through github.com/sashabaranov/go-openai,
// streams each answer, runs the structured tool calls the model asks for and
// feeds their results back, until the model answers without tool calls. It
// knows nothing of pm's store (its transcript is kept through
// internal/state/transcript, on files or on a hub, not here): the agent host gives it a Provider, Tools, a
// system prompt, a Transcript and a Budget, and records its Events.
//
//	p, err := llm.ProviderFromEnv(os.Getenv, cfg.BaseURL, cfg.Model, fm.Model)
//	if err != nil { ... } // says exactly what to set
//	l := &llm.Loop{Provider: p, Tools: tools, System: prompt,
//		Transcript: transcript.Of(st, name), // internal/state/transcript over a state.State
//		Budget: llm.Budget{MaxTurns: 50, MaxWall: time.Hour}}
//	answer, err := l.Run(ctx, "the task") // "" resumes the transcript
//
// # Invariants
//
//   - The transcript is the conversation: every message except the system
//     prompt is appended to it as soon as it exists (the user message, each
//     assistant message, each tool result), before the loop acts on it, and
//     the in-memory history is exactly what was appended. Run reloads it, so a
//     respawned agent (after kill -9) continues where the file ends. (With
//     HistoryBytes the history is, after a cut, what the transcript keeps.)
//   - With HistoryBytes set (the Transcript's bound, the state's
//     limits.transcript_bytes) the history is kept as the transcript is, by
//     the transcript's own cut (history.go): the loop counts what it holds
//     as the state counts it (each message's JSON, a leading mark of a cut
//     left out), or less, so once past the bound the transcript is past it
//     too and was cut at that append; the loop then reads it back and holds
//     exactly what a run resuming it loads (EventCut), repaired as load
//     repairs it but for the calls of the step being run. A request is at
//     most the bound and the step that passed it; a read-back that leaves
//     the history over it (one step longer than it) is made again only
//     after a quarter of the bound more (state.PlanAgainAt). There is no
//     second cut rule: where to cut is state.PlanCut's decision, on the
//     transcript.
//   - Every request is valid for the API: each assistant tool call carries an
//     id, type "function", a name and non-empty arguments ("{}" at least) and
//     is answered by exactly one "tool" message with its tool_call_id, in
//     call order, right after it. Calls a crash left unanswered are answered
//     on load with an "interrupted" error result (appended to the file when
//     they are its tail); they are never re-run, since they may have acted.
//   - Tool calls are structured (never parsed from text); deltas are merged
//     by their index. All calls of one turn run concurrently, each under
//     ToolTimeout; a tool error, panic, timeout, unknown name or invalid JSON
//     arguments becomes that call's result text ("error: ..."), never a loop
//     failure. Results over MaxToolResult bytes are cut with a note.
//   - Every model call attempt runs under CallTimeout. 408, 409, 429, 5xx,
//     network errors, per-attempt timeouts and streams that end without a
//     finish_reason (go-openai reports those as a plain io.EOF) are retried
//     up to RetryPolicy.MaxAttempts with exponential backoff and jitter, or
//     exactly the server's Retry-After / retry-after-ms (captured by an
//     http.RoundTripper, since go-openai drops headers), capped at MaxDelay.
//     Other 4xx fail at once. The streamed text of a failed attempt has
//     already gone to OnDelta; an EventRetry tells the reader to drop it.
//   - Budgets are circuit breakers in code. Before each model call: turns,
//     tokens and wall time must be under their limits. After
//     each response asking for tools: the calls must fit MaxToolCalls and
//     tokens must not have passed MaxTokens, else none of them runs (each is
//     answered "error: not run: budget exceeded ..." so the transcript stays
//     valid). Wall time also bounds in-flight calls through the context.
//     A stop returns *BudgetError and emits EventBudget. A response without
//     tool calls is the answer and is returned even if it used the last
//     tokens. Tokens come from the usage the stream reports
//     (stream_options.include_usage); an endpoint that reports none is
//     estimated at four characters a token (Usage.Estimated: a host prices
//     no estimate). Loop.Used and Loop.Started may be seeded by a host so
//     budgets span respawns. Loop.Before is asked before each call too, for
//     what only the host knows (a task's sum, dollars, a project's window);
//     its error stops the loop before the call is made.
//   - Secrets never leave masked: Provider.APIKey and Loop.Secrets are
//     replaced by secret.Masked in every message before it enters the
//     history (so the model and the transcript never see them), in tool
//     arguments and results, in every Event, in streamed deltas (a possible
//     start of a secret is held back until the next delta settles it,
//     secret.Set.MaskStream) and in every error Run returns. Provider's
//     String and GoString hide the key.
//   - With DocPreview set (code-designer mode) a call runs only after the
//     model saw its tool's doc preview and called it again (docpreview.go:
//     the preview is the held-back call's tool result; confirmed, revised
//     and dropped are EventDocDecision); with it nil nothing changes.
//   - With Repeats set (the loop breaker, repeat.go), a call that would be
//     the Limit-th in a row with the same arguments, the ones before it with
//     the same result, is held before any call of its response runs and
//     OnRepeat decides: run it, answer it with a refusal, or stop the loop
//     (every call of the response answered, *RepeatError or OnRepeat's).
//   - OnDelta and OnEvent are never called concurrently with each other or
//     themselves. Run calls on one Loop are serialized.
//
// # Not done
//
//   - Only the first choice is read; n > 1 is never requested.
//   - parallel_tool_calls and tool_choice are left to the endpoint's default.
//   - The API key comes from OPENAI_API_KEY only; ProviderFromEnv takes the
//     base URL and model from config, not a key.
//   - A message over the JSONL line limit (1 MiB) cannot be recorded; tool
//     results are capped well below it, model text is not.
package llm
