package keys_test

import (
	"context"
	"encoding/base64"
	"strings"
	"sync"
	"testing"

	"github.com/scangate/scangate/internal/keys"
	"github.com/scangate/scangate/internal/secretstest"
)

// lambdaEnv is a function's environment on Lambda, with the stand-in as
// Secrets Manager's endpoint and extra variables.
func lambdaEnv(endpoint string, extra map[string]string) func(string) string {
	env := map[string]string{"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret",
		"AWS_SESSION_TOKEN": "token", "SECRETSMANAGER_ENDPOINT": endpoint}
	for k, v := range extra {
		env[k] = v
	}
	return func(name string) string { return env[name] }
}

const arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:CursorKey-AbCdEf"

// A key is read from Secrets Manager (a signed GetSecretValue) at its
// first use, not when the function starts, and then kept: one request for
// many uses.
func TestKeyIsFetchedAtFirstUseAndKept(t *testing.T) {
	value := strings.Repeat("Ab9x", 16) // 64 letters: base64 of 48 bytes
	sm := secretstest.Start(t, map[string]string{arn: value})
	sm.SecretAccessKey = "secret" // lambdaEnv's: each request's signature is checked
	k, err := keys.FromEnv(lambdaEnv(sm.URL, map[string]string{"CURSOR_KEY_ID": arn}), "CURSOR_KEY_ID", 32)
	if err != nil {
		t.Fatal(err)
	}
	if n := sm.Requests(); n != 0 {
		t.Fatalf("%d requests before the key was used", n)
	}
	want, _ := base64.StdEncoding.DecodeString(value)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got, err := k.Get(context.Background())
			if err != nil || string(got) != string(want) {
				t.Errorf("Get: %x %v", got, err)
			}
		})
	}
	wg.Wait()
	if n := sm.Requests(); n != 1 || sm.IDs()[0] != arn {
		t.Fatalf("%d requests for %v, want one for %s", n, sm.IDs(), arn)
	}
}

// A fetch that fails is tried again at the next use; a secret that is not
// a key, or a missing variable, is an error that never shows a value.
func TestKeyErrors(t *testing.T) {
	short := base64.StdEncoding.EncodeToString([]byte("thirty-one bytes, one too few!!"))
	sm := secretstest.Start(t, map[string]string{arn: strings.Repeat("Ab9x", 16), "short": short, "text": "not base64, but long enough to be a key, surely"})
	env := lambdaEnv(sm.URL, map[string]string{"SECRETS_KEY_ID": arn, "SHORT": "short", "TEXT": "text", "MISSING": "missing"})
	k, _ := keys.FromEnv(env, "SECRETS_KEY_ID", 32)
	sm.Fail.Store(true)
	if _, err := k.Get(context.Background()); err == nil || !strings.Contains(err.Error(), "SECRETS_KEY_ID") {
		t.Fatalf("Secrets Manager failing: %v", err)
	}
	sm.Fail.Store(false)
	if _, err := k.Get(context.Background()); err != nil {
		t.Fatalf("once it answers again: %v", err)
	}
	for _, name := range []string{"SHORT", "TEXT", "MISSING"} {
		k, _ := keys.FromEnv(env, name, 32)
		_, err := k.Get(context.Background())
		if err == nil || strings.Contains(err.Error(), short) || strings.Contains(err.Error(), "surely") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := keys.FromEnv(env, "CURSOR_KEY_ID", 32); err == nil || !strings.Contains(err.Error(), "CURSOR_KEY_ID is not set") {
		t.Errorf("no variable: %v", err)
	}
}

// The endpoint of a region, China's partition included.
func TestEndpoint(t *testing.T) {
	for region, want := range map[string]string{
		"us-east-1":     "https://secretsmanager.us-east-1.amazonaws.com",
		"eu-west-3":     "https://secretsmanager.eu-west-3.amazonaws.com",
		"us-gov-west-1": "https://secretsmanager.us-gov-west-1.amazonaws.com",
		"cn-north-1":    "https://secretsmanager.cn-north-1.amazonaws.com.cn",
	} {
		if got := keys.Endpoint(region); got != want {
			t.Errorf("%s: %s, want %s", region, got, want)
		}
	}
}
