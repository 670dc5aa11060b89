package bus_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/events/bus"
	"github.com/scangate/scangate/internal/events/dispatch"
)

type entry struct {
	Source, DetailType, Detail, EventBusName string
}

// Every event is put with source scangate, detail-type its type and detail
// its body, on the stack's bus; the entries EventBridge reports failed are
// put again, alone.
func TestPutEvents(t *testing.T) {
	var mu sync.Mutex
	var calls [][]entry
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Entries []entry }
		if r.Header.Get("X-Amz-Target") != "AWSEvents.PutEvents" || json.NewDecoder(r.Body).Decode(&in) != nil {
			http.Error(w, `{"__type":"InvalidAction"}`, http.StatusBadRequest)
			return
		}
		mu.Lock()
		calls = append(calls, in.Entries)
		first := len(calls) == 1
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		if first { // the second entry failed
			_, _ = w.Write([]byte(`{"FailedEntryCount":1,"Entries":[{"EventId":"1"},{"ErrorCode":"InternalFailure","ErrorMessage":"try again"}]}`))
			return
		}
		_, _ = w.Write([]byte(`{"FailedEntryCount":0,"Entries":[{"EventId":"2"}]}`))
	}))
	defer srv.Close()
	env := map[string]string{"EVENT_BUS_NAME": "scangate-prod", "EVENTBRIDGE_ENDPOINT": srv.URL}
	b, err := bus.Open(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	err = b.Put(context.Background(), []dispatch.Entry{
		{Type: "allowlist.created", Time: time.Now(), Detail: []byte(`{"id":"A","type":"allowlist.created"}`)},
		{Type: "pr.gate_changed", Time: time.Now(), Detail: []byte(`{"id":"B","type":"pr.gate_changed"}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 || len(calls[0]) != 2 || len(calls[1]) != 1 {
		t.Fatalf("calls %+v", calls)
	}
	want := entry{Source: "scangate", DetailType: "pr.gate_changed", Detail: `{"id":"B","type":"pr.gate_changed"}`, EventBusName: "scangate-prod"}
	if calls[0][1] != want || calls[1][0] != want || calls[0][0].DetailType != "allowlist.created" {
		t.Errorf("entries %+v", calls)
	}
	if _, err := bus.Open(func(string) string { return "" }); err == nil {
		t.Error("opened without EVENT_BUS_NAME")
	}
}
