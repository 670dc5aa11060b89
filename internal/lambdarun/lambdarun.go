// Package lambdarun runs a Lambda function the way Lambda's runtimes do: as
// a process (a provided.al2023 bootstrap binary, or a runtime interface
// client such as Python's awslambdaric) polling a Lambda Runtime API (the
// next, response and error endpoints), served here on a loopback port. It
// measures the process's init (start to its first poll of next), each
// invocation's latency and the process's peak memory.
package lambdarun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Result is what one run measured.
type Result struct {
	Init        time.Duration   // process start to its first poll of next
	Invocations []time.Duration // event handed out to response posted
	Responses   [][]byte
	PeakRSS     int64         // KiB (VmHWM)
	CPU         time.Duration // the process's CPU time, user and system, until its last answer
}

type invocation struct {
	id    string
	event []byte
	sent  time.Time
}

type outcome struct {
	body []byte
	err  error
	at   time.Time
}

// runtimeAPI is the Lambda Runtime API for one process.
type runtimeAPI struct {
	firstPoll chan time.Time
	once      sync.Once
	events    chan invocation
	results   chan outcome
	deadline  time.Duration
}

func (a *runtimeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const prefix = "/2018-06-01/runtime/"
	path := strings.TrimPrefix(r.URL.Path, prefix)
	switch {
	case r.Method == http.MethodGet && path == "invocation/next":
		a.once.Do(func() { a.firstPoll <- time.Now() })
		select {
		case inv := <-a.events:
			h := w.Header()
			h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
			h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(a.deadline).UnixMilli(), 10))
			h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:bench")
			h.Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000;Sampled=0")
			h.Set("Content-Type", "application/json")
			_, _ = w.Write(inv.event)
		case <-r.Context().Done():
		}
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/response"):
		b, _ := io.ReadAll(r.Body)
		a.results <- outcome{body: b, at: time.Now()}
		w.WriteHeader(http.StatusAccepted)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/error"):
		b, _ := io.ReadAll(r.Body)
		a.results <- outcome{err: fmt.Errorf("invocation error: %s", b), at: time.Now()}
		w.WriteHeader(http.StatusAccepted)
	case r.Method == http.MethodPost && path == "init/error":
		b, _ := io.ReadAll(r.Body)
		a.results <- outcome{err: fmt.Errorf("init error: %s", b), at: time.Now()}
		w.WriteHeader(http.StatusAccepted)
	default:
		http.NotFound(w, r)
	}
}

// Process is how to start a function: its command line, working
// directory (empty: this one), its name and memory as Lambda would show
// them, and its configured environment. The process gets exactly the
// environment Lambda gives a function of the provided.al2023 runtime
// (LambdaEnv) with Env added: nothing of this process's own.
type Process struct {
	Argv []string
	Dir  string
	Name string // AWS_LAMBDA_FUNCTION_NAME; the program's base name when empty
	// MemoryMB is AWS_LAMBDA_FUNCTION_MEMORY_SIZE; 256 when zero.
	MemoryMB int
	// Env is the function's configured environment (template.yaml's
	// Environment). A variable Lambda sets is replaced by one of Env (the
	// bench's region and credentials stand in for the role's).
	Env []string
	// Deadline is each invocation's time (Lambda-Runtime-Deadline-Ms);
	// 30 s when zero.
	Deadline time.Duration
}

// Run starts binary with env under a fresh Runtime API, waits for its first
// poll, hands it the events one by one and stops it.
func Run(ctx context.Context, binary string, env []string, events [][]byte) (Result, error) {
	return RunProcess(ctx, Process{Argv: []string{binary}, Env: env}, events)
}

// RunProcess is Run for any process.
func RunProcess(ctx context.Context, p Process, events [][]byte) (Result, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Result{}, fmt.Errorf("listen: %w", err)
	}
	deadline := p.Deadline
	if deadline <= 0 {
		deadline = 30 * time.Second
	}
	api := &runtimeAPI{firstPoll: make(chan time.Time, 1), events: make(chan invocation), results: make(chan outcome, 1), deadline: deadline}
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()

	cmd := exec.CommandContext(ctx, p.Argv[0], p.Argv[1:]...)
	cmd.Dir = p.Dir
	cmd.Env = environ(p, ln.Addr().String())
	stderr := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("start %s: %w", p.Argv[0], err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	var res Result
	select {
	case t := <-api.firstPoll:
		res.Init = t.Sub(start)
	case o := <-api.results:
		return res, o.err
	case <-time.After(30 * time.Second):
		return res, fmt.Errorf("no poll of next within 30 s: %s", tail(stderr.String()))
	}
	for i, ev := range events {
		inv := invocation{id: fmt.Sprintf("req-%d", i), event: ev, sent: time.Now()}
		select {
		case api.events <- inv:
		case <-time.After(30 * time.Second):
			return res, errors.New("the function stopped polling")
		}
		o := <-api.results
		if o.err != nil {
			return res, o.err
		}
		res.Invocations = append(res.Invocations, o.at.Sub(inv.sent))
		res.Responses = append(res.Responses, o.body)
	}
	res.PeakRSS = peakRSS(cmd.Process.Pid)
	res.CPU = cpuTime(cmd.Process.Pid)
	return res, nil
}

// LambdaEnv is the environment Lambda gives a function of the
// provided.al2023 runtime before its own configuration (the AWS Lambda
// Developer Guide, "Defined runtime environment variables"): the runtime
// API's address, the function's name, version, memory and log stream, its
// region and its role's credentials (placeholders here), the handler and
// the task and runtime directories, TZ, LANG, PATH and LD_LIBRARY_PATH. No
// HOME, no USER, no working directory variable: none is set by Lambda.
func LambdaEnv(runtimeAPI, name string, memoryMB int) []string {
	return []string{
		"AWS_LAMBDA_RUNTIME_API=" + runtimeAPI,
		"AWS_LAMBDA_FUNCTION_NAME=" + name,
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=" + strconv.Itoa(memoryMB),
		"AWS_LAMBDA_INITIALIZATION_TYPE=on-demand",
		"AWS_LAMBDA_LOG_GROUP_NAME=/scangate/scangate/functions", // template.yaml's FunctionLogs, shared
		"AWS_LAMBDA_LOG_STREAM_NAME=2026/01/01/" + name + "[$LATEST]0123456789abcdef0123456789abcdef",
		"AWS_REGION=us-east-1",
		"AWS_DEFAULT_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=ASIAEXAMPLEEXAMPLE00",
		"AWS_SECRET_ACCESS_KEY=bench/secret/access/key/of/forty/chars/00",
		"AWS_SESSION_TOKEN=" + strings.Repeat("IQoJb3JpZ2luX2VjEXAMPLE", 40),
		"_HANDLER=bootstrap",
		"LAMBDA_TASK_ROOT=/var/task",
		"LAMBDA_RUNTIME_DIR=/var/runtime",
		"TZ=:UTC",
		"LANG=en_US.UTF-8",
		"PATH=/usr/local/bin:/usr/bin/:/bin:/opt/bin",
		"LD_LIBRARY_PATH=/var/lang/lib:/lib64:/usr/lib64:/var/runtime:/var/runtime/lib:/var/task:/var/task/lib:/opt/lib",
	}
}

// environ is a process's whole environment: LambdaEnv with the
// variables of p.Env set over it.
func environ(p Process, runtimeAPI string) []string {
	name, mem := p.Name, p.MemoryMB
	if name == "" {
		name = filepath.Base(p.Argv[0])
	}
	if mem <= 0 {
		mem = 256
	}
	env := LambdaEnv(runtimeAPI, name, mem)
	for _, kv := range p.Env {
		k, _, _ := strings.Cut(kv, "=")
		env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, k+"=") })
		env = append(env, kv)
	}
	return env
}

// peakRSS reads a process's peak resident set (VmHWM) in KiB.
func peakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// cpuTime is a live process's CPU time: utime and stime of its stat, in
// clock ticks of 10 ms (USER_HZ, 100 on Linux whatever the kernel's HZ).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command's name, in parentheses, may hold spaces: count fields
	// after its closing parenthesis (state is field 3, utime 14, stime 15).
	rest := string(b[bytes.LastIndexByte(b, ')')+1:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// lockedBuffer keeps a process's error output, written by exec's copying
// goroutine and read when the process fails.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tail is the end of a process's error output, for an error message.
func tail(s string) string {
	if len(s) > 2000 {
		return "..." + s[len(s)-2000:]
	}
	return s
}
