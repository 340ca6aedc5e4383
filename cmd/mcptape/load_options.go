package main

// From the flags of "mcptape load" to a run: its target, workload,
// options and thresholds, every flag checked before anything is created.

import (
	"context"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mcptape/mcptape/loadgen"
	"github.com/mcptape/mcptape/transport"
)

// check turns the flags into the run's target, calls, options and
// thresholds; ctx is the run's (a second signal cuts its sessions' close:
// stopNow).
func (f *loadFlags) check(ctx context.Context, command []string) (loadgen.Target, []loadgen.Call, []loadgen.Option, []loadgen.Threshold, error) {
	target := loadgen.Target{URL: f.url, SSE: f.sse, Command: command}
	n := 0
	for _, set := range []bool{f.url != "", f.sse != "", len(command) > 0} {
		if set {
			n++
		}
	}
	if n != 1 {
		return target, nil, nil, nil, usageError("give exactly one of --url URL, --sse URL or -- CMD [ARGS...]")
	}
	for _, u := range []struct{ flag, url string }{{"--url", f.url}, {"--sse", f.sse}} {
		if u.url != "" {
			if err := checkServerURL(u.flag, u.url); err != nil {
				return target, nil, nil, nil, err
			}
		}
	}
	if transport.IsWebSocketURL(f.sse) {
		return target, nil, nil, nil, usageError("--sse %q: the legacy SSE transport is HTTP; give a ws:// URL with --url", f.sse)
	}
	if f.tape == "" && (len(f.calls) == 0) == (f.scenario == "") {
		return target, nil, nil, nil, usageError("give at least one --call, or a --scenario (not both)")
	}
	var calls []loadgen.Call
	var scenario *loadgen.Scenario
	if f.scenario != "" {
		fh, err := os.Open(f.scenario)
		if err != nil {
			return target, nil, nil, nil, usageError("--scenario: %v", err)
		}
		scenario, err = loadgen.ParseScenario(fh)
		fh.Close()
		if err != nil {
			return target, nil, nil, nil, usageError("--scenario %s: %v", f.scenario, err)
		}
		calls = scenario.Steps
	}
	for _, spec := range f.calls {
		c, err := loadgen.ParseCall(spec)
		if err != nil {
			return target, nil, nil, nil, flagValueError("call", spec, err)
		}
		calls = append(calls, c)
	}
	if f.grace <= 0 {
		return target, nil, nil, nil, usageError("--grace %v: must be positive", f.grace)
	}
	if !f.findMax.on && f.findMax.maxRate != "" {
		return target, nil, nil, nil, usageError("--max-rate needs --find-max")
	}
	stages, err := f.parseStages()
	if err != nil {
		return target, nil, nil, nil, err
	}
	if f.tape == "" && f.duration == 0 && f.requests == 0 && len(stages) == 0 && !f.findMax.on {
		return target, nil, nil, nil, usageError("give --duration DUR, --requests N or --stage DUR:TARGET")
	}
	if f.hlogEvery < 10*time.Millisecond {
		return target, nil, nil, nil, usageError("--hlog-interval %v: want at least 10ms", f.hlogEvery)
	}
	opts := []loadgen.Option{loadgen.WithSessions(f.sessions), loadgen.WithTimeout(f.timeout), loadgen.WithIntervals(f.hlogEvery),
		loadgen.WithProtocolVersion(f.protocol), loadgen.WithRamp(f.ramp), loadgen.WithMaxConns(f.maxConns),
		loadgen.WithGrace(f.grace), loadgen.WithStopNow(stopNow(ctx))}
	if len(stages) > 0 {
		opts = append(opts, loadgen.WithStages(stages))
		if stages[0].Rate {
			opts = append(opts, loadgen.WithMaxInFlight(f.maxInflight))
		}
	}
	if f.duration != 0 {
		opts = append(opts, loadgen.WithDuration(f.duration))
	}
	if f.requests != 0 {
		opts = append(opts, loadgen.WithRequests(f.requests))
	}
	if f.findMax.on { // the steps set the rate
		opts = append(opts, loadgen.WithMaxInFlight(f.maxInflight))
	} else if f.rate != "" {
		r, err := loadgen.ParseRate(f.rate)
		if err != nil {
			return target, nil, nil, nil, usageError("--rate: %v", err)
		}
		opts = append(opts, loadgen.WithRate(r), loadgen.WithMaxInFlight(f.maxInflight))
		if f.inflight != 1 || f.think != 0 {
			return target, nil, nil, nil, usageError("--inflight and --think belong to the closed model, not to --rate")
		}
	} else if len(stages) == 0 || !stages[0].Rate {
		if f.maxInflight != loadgen.DefaultMaxInFlight {
			return target, nil, nil, nil, usageError("--max-inflight belongs to the open model (--rate, rate stages, --find-max), not to the closed model")
		}
		think := f.think
		if scenario != nil && think == 0 {
			think = scenario.Think
		}
		opts = append(opts, loadgen.WithInFlight(f.inflight), loadgen.WithThink(think))
	}
	if scenario != nil && len(scenario.Setup) > 0 {
		opts = append(opts, loadgen.WithSetupCalls(scenario.Setup))
	}
	if f.batch != 1 {
		opts = append(opts, loadgen.WithBatch(f.batch))
	}
	if fs := f.cancelRatio; fs != 0 || f.cancelAfter != 0 {
		if fs == 0 {
			fs = 1
		}
		opts = append(opts, loadgen.WithCancel(f.cancelAfter, fs))
	}
	if f.progress {
		opts = append(opts, loadgen.WithProgress())
	}
	if f.getStream {
		if f.url == "" {
			return target, nil, nil, nil, usageError("--get-stream needs --url")
		}
		opts = append(opts, loadgen.WithGetStream())
	}
	if f.streamPath != "" {
		if err := checkStreamPath(f.streamPath, f.url); err != nil {
			return target, nil, nil, nil, err
		}
		if f.getStream {
			return target, nil, nil, nil, usageError("--stream-path and --get-stream exclude each other: the server's messages come on one stream")
		}
		opts = append(opts, loadgen.WithStreamPath(f.streamPath))
	}
	if f.insecure {
		if len(command) > 0 {
			return target, nil, nil, nil, usageError("--insecure needs --url or --sse")
		}
		opts = append(opts, loadgen.WithInsecureTLS())
	}
	if err := f.wsProto.check(f.url); err != nil {
		return target, nil, nil, nil, err
	}
	if f.wsProto.set {
		opts = append(opts, loadgen.WithWSSubprotocols(f.wsProto.protos...))
	}
	if f.onExit != loadgen.OnExitStop {
		if len(command) == 0 {
			return target, nil, nil, nil, usageError("--on-exit applies to a stdio server (-- CMD)")
		}
		if f.onExit != loadgen.OnExitRestart {
			return target, nil, nil, nil, usageError("--on-exit %q: want stop or restart", f.onExit)
		}
		opts = append(opts, loadgen.WithOnExit(f.onExit))
	}
	if len(f.headers) > 0 {
		if len(command) > 0 {
			return target, nil, nil, nil, usageError("--header needs --url or --sse")
		}
		h := http.Header{}
		for _, kv := range f.headers {
			k, v, ok := strings.Cut(kv, ":")
			if !ok || strings.TrimSpace(k) == "" {
				return target, nil, nil, nil, usageError("--header: want NAME: VALUE, got %q", strings.SplitN(kv, ":", 2)[0])
			}
			h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
		opts = append(opts, loadgen.WithHeader(h))
	}
	th, err := parseThresholds(f.thresholds)
	if err != nil {
		return target, nil, nil, nil, err
	}
	return target, calls, opts, th, nil
}

// parseStages parses the --stage flags and checks the flags they leave
// out: the stages set the duration, the ramps and the rate (open model) or
// the sessions (closed model).
func (f *loadFlags) parseStages() ([]loadgen.Stage, error) {
	if len(f.stages) == 0 {
		return nil, nil
	}
	if f.tape != "" || f.duration != 0 || f.ramp != 0 || f.rate != "" {
		return nil, usageError("--stage sets the duration, ramps and load: no --tape, --duration, --ramp or --rate besides")
	}
	var out []loadgen.Stage
	for _, spec := range f.stages {
		s, err := loadgen.ParseStage(spec)
		if err != nil {
			return nil, flagValueError("stage", spec, err)
		}
		if len(out) > 0 && s.Rate != out[0].Rate {
			return nil, usageError("--stage %s: stages are all rates (open model) or all sessions (closed model)", spec)
		}
		out = append(out, s)
	}
	if !out[0].Rate && f.sessions != 1 {
		return nil, usageError("--stage with session targets sets the sessions: no --sessions besides")
	}
	if out[0].Rate && (f.inflight != 1 || f.think != 0) {
		return nil, usageError("--inflight and --think belong to the closed model, not to rate stages")
	}
	return out, nil
}

// parseThresholds parses the --threshold flags (of load and report merge).
func parseThresholds(specs []string) ([]loadgen.Threshold, error) {
	var out []loadgen.Threshold
	for _, s := range specs {
		t, err := loadgen.ParseThreshold(s)
		if err != nil {
			return nil, flagValueError("threshold", s, err)
		}
		out = append(out, t)
	}
	return out, nil
}
