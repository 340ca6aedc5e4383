package main

// helpTopics are the texts of "mcptape help TOPIC" that are not commands.
var helpTopics = map[string]string{"scenario": scenarioHelp}

// scenarioHelp documents the --scenario file of "mcptape load"; the same
// text, with the worked example, is docs/scenario.md.
const scenarioHelp = `The --scenario file of mcptape load: a workload as one JSON object.

  {
    "setup": [ STEP, ... ],   optional: sent once by every session, in order,
                              after its handshake (and again after a new one)
    "steps": [ STEP, ... ],   required: each iteration sends one, chosen by weight
    "think": "150ms"          optional: closed-model pause after each step
  }

A STEP is
  {
    "method": "tools/call",   required: any request method but initialize
    "tool": "echo",           required for tools/call, absent otherwise
    "args": { ... },          optional: the tool's arguments, or the method's params
    "weight": 3,              optional, default 1 (steps only): relative frequency
    "think": "100ms"          optional: replaces the scenario's think after this step
  }

Unknown keys are errors; errors name the step. Inside the string values of
"args" (a string may also be an object key), these variables are replaced for
every request:
  {{session}}          the session number, from 0
  {{iteration}}        the session's request number, from 0
  {{choice:a|b|c}}     one of the |-separated values, at random
  {{random:N}}         N random letters and digits (N from 1 to 4096)

Series: setup steps are recorded as "setup METHOD" (and "setup tools/call
NAME"), not counted as requests; steps as their method and tool. Think times
apply to the closed model (--sessions); with --rate the arrivals set the pace.

Worked example, an agent session against 'mcptape serve' (the file is
docs/examples/agent-session.json): every session lists the tools and prompts
once, then searches often (echo stands in for a search tool), reads a resource,
calls a slow tool, sums numbers and renders a prompt, pausing as an agent
thinking between calls:

  {
    "setup": [
      {"method": "tools/list"},
      {"method": "prompts/list"}
    ],
    "steps": [
      {"weight": 5, "method": "tools/call", "tool": "echo",
       "args": {"message": "search {{choice:weather in Paris|flights to Oslo|open pull requests}} for user {{session}}"},
       "think": "300ms"},
      {"weight": 3, "method": "resources/read", "args": {"uri": "mcptape://readme"}, "think": "800ms"},
      {"weight": 2, "method": "tools/call", "tool": "sleep", "args": {"ms": 50}},
      {"weight": 1, "method": "tools/call", "tool": "add", "args": {"a": 2, "b": 40}},
      {"weight": 1, "method": "prompts/get", "args": {"name": "greet", "arguments": {"name": "agent-{{session}}-{{iteration}}-{{random:6}}"}}}
    ],
    "think": "150ms"
  }

  mcptape serve --http 127.0.0.1:8080 &
  mcptape load --url http://127.0.0.1:8080/mcp --scenario docs/examples/agent-session.json \
    --stage 30s:50 --stage 2m:50 --stage 30s:0 --json agent.json
  mcptape report agent.json -o agent.html
`
