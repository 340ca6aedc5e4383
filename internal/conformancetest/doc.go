// Package conformancetest holds no code, only a test: the official MCP
// conformance server suite (@modelcontextprotocol/conformance, pinned in
// testdata/conformance with the Node 22 it needs) run against real servers
// both directly and through `mcptape record --listen ... --upstream ...`,
// the built command, in `make test`.
//
// # What is run
//
// Three servers we did not write: the go-sdk v1.8.0 conformance
// everything-server stateful (-stateless=false) and stateless (its
// default), and TypeScript server-everything 2026.8.31 streamableHttp.
// For each, every server scenario that `conformance list --server` names
// is run alone (`conformance server --scenario NAME`), and the whole suite
// once (`--suite all`), each time directly and through a fresh proxy with
// its own tape. Direct runs use their own server process, so the two sides
// see servers with the same history. The scenarios are run in three
// groups in parallel (scenarioGroups), each in order against a pair of
// servers of its own.
//
// # What must hold
//
//   - Every scenario gives the same checks through the proxy as directly:
//     the same check ids, each with the same status (SUCCESS, FAILURE,
//     WARNING, INFO...) and error message, read from the suite's results
//     (-o DIR, one checks.json per scenario) and compared as sorted lists.
//     Loopback host:port pairs in messages are blanked out (the proxy's
//     address is not the server's); details are not compared (they hold
//     session ids and times). Messages matter: a request that hangs
//     through the proxy in a scenario that fails anyway changes "Server
//     did not request elicitation" into "Request timed out".
//   - The suite through the proxy exits as it does directly and takes at
//     most 30 s longer: a client timeout must not hide a hang.
//   - The proxied suite finishes: a run with no result after a generous
//     timeout fails as "hung through the proxy", naming the scenario.
//   - No tape holds an unanswered request (analysis.Inspect) that was
//     answered in the direct run. What the direct run answered is observed
//     inside the suite, with nothing on the wire: observe.cjs, preloaded
//     into the direct run's node, logs every JSON-RPC request and response
//     its fetch calls carry. Requests are matched by direction, method and
//     id. A request the direct run also left unanswered is allowed: the
//     go-sdk server's test_reconnection in server-sse-polling is one (it
//     closes the POST stream with no event and no event id, so no client
//     can resume it).
//   - The proxy exits 0 on SIGINT; the binary is built with -race when the
//     test is, so a data race under real traffic fails the test too.
//
// A comparison that fails is made once only: the suite answers every
// request its server scenarios make the client answer, so a second try
// would only hide a recording fault. With MCPTAPE_CONFORMANCE_KEEP=DIR
// the tape, the proxy's output and both runs' results of a failed
// comparison are kept under DIR (see keepEnv), for mcptape show and
// inspect.
//
// # The suite against mcptape mock
//
// TestConformanceAgainstMock records the whole suite (--suite all) against
// the go-sdk everything-server (stateful) through mcptape record, then runs
// it against `mcptape mock` of that tape over Streamable HTTP: every check
// that passed against the server passes against the mock, and the mock's
// report shows no unmatched request.
//
// # The go-sdk client against mcptape mock
//
// TestGoClientAgainstMock runs the go-sdk v1.8.0 everything-client under
// `conformance client --scenario NAME` for each non-auth client scenario
// (initialize, tools_call, elicitation-sep1034-client-defaults,
// sse-retry), with the test binary itself as the client command: started
// with MCPTAPE_TEST_WRAP_CLIENT set, it puts `mcptape record --listen
// 127.0.0.1:0 --upstream URL` in front of the suite's test server and runs
// the client through it. The scenario must pass; then the client runs
// again, alone (MCP_CONFORMANCE_SCENARIO=NAME), against `mcptape mock
// --http` of that tape: it must exit as it did against the test server,
// and the mock's report must show no unmatched request. The auth/*
// scenarios are left out: their test server names its own address in the
// OAuth metadata and runs the authorization server there, so the client's
// OAuth traffic bypasses a proxy on another address and is not on the
// tape, and the mock serves only the MCP endpoint.
//
// # What is not run, and why
//
// The suite's OAuth scenarios are client scenarios (`conformance client`),
// not server ones: version 0.1.16 has no auth scenario among its server
// scenarios, so the server suite runs whole. (Were auth server scenarios
// added, those whose OAuth metadata names the server's own address would
// fail through any proxy on another address; the comparison with the
// direct run would show it.)
package conformancetest
