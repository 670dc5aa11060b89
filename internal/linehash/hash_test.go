package linehash

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"
)

type publishedCase struct {
	Name   string   `json:"name"`
	Input  string   `json:"input"`
	Hashes []string `json:"hashes"`
}

// published reads the expected values GitHub publishes with its upload
// action (testdata/github-hashes.json).
func published(t testing.TB) []publishedCase {
	t.Helper()
	b, err := os.ReadFile("testdata/github-hashes.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []publishedCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Cases) == 0 {
		t.Fatalf("testdata/github-hashes.json: %v (%d cases)", err, len(doc.Cases))
	}
	return doc.Cases
}

// all is every line's hash of src, in order, by Each.
func all(t *testing.T, src io.Reader) []string {
	t.Helper()
	var got []string
	err := Each(src, func(line int, hash string) error {
		if line != len(got)+1 {
			t.Fatalf("line %d given after %d lines", line, len(got))
		}
		got = append(got, hash)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// Every line of every file GitHub's tests hash gets the hash GitHub
// publishes for it, however the file is cut into reads.
func TestPublishedHashes(t *testing.T) {
	for _, c := range published(t) {
		t.Run(c.Name, func(t *testing.T) {
			readers := map[string]io.Reader{
				"whole":       strings.NewReader(c.Input),
				"byte a read": iotest.OneByteReader(strings.NewReader(c.Input)),
			}
			for how, r := range readers {
				if got := all(t, r); strings.Join(got, " ") != strings.Join(c.Hashes, " ") {
					t.Errorf("%s:\n got %v\nwant %v", how, got, c.Hashes)
				}
			}
			for i, want := range c.Hashes {
				got, err := Lines(strings.NewReader(c.Input), []int{i + 1})
				if err != nil || len(got) != 1 || got[i+1] != want {
					t.Errorf("Lines(%d) = %v, %v; want %s", i+1, got, err, want)
				}
			}
		})
	}
}

// Lines gives the lines asked for, none past the end, and stops reading
// after the last one.
func TestLines(t *testing.T) {
	c := published(t)[7] // ten times the same line, then the line after the last break
	if !strings.HasPrefix(c.Input, "Lorem") || len(c.Hashes) != 11 {
		t.Fatalf("case %q", c.Name)
	}
	got, err := Lines(strings.NewReader(c.Input), []int{11, 2, 0, -1, 12, 2, 9})
	want := map[int]string{2: c.Hashes[1], 9: c.Hashes[8], 11: c.Hashes[10]}
	if err != nil || len(got) != len(want) || got[2] != want[2] || got[9] != want[9] || got[11] != want[11] {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	if got, err := Lines(strings.NewReader(c.Input), nil); err != nil || len(got) != 0 {
		t.Errorf("no lines: %v %v", got, err)
	}

	// Line 2 of a 10 MB file is known 100 characters after its start.
	big := &countingReader{r: io.LimitReader(neverEnding('a'), 10<<20)}
	if got, err := Lines(big, []int{1}); err != nil || len(got) != 1 {
		t.Fatalf("a 10 MB line: %v %v", got, err)
	}
	file := "first\nsecond\n" + strings.Repeat("x\n", 5<<20)
	big = &countingReader{r: strings.NewReader(file)}
	if got, err := Lines(big, []int{2}); err != nil || len(got) != 1 || big.n > 128<<10 {
		t.Errorf("line 2 of %d bytes: %v %v after reading %d bytes", len(file), got, err, big.n)
	}
}

// A read error ends the pass with it.
func TestReadError(t *testing.T) {
	boom := errors.New("boom")
	_, err := Lines(iotest.ErrReader(boom), []int{1})
	if !errors.Is(err, boom) {
		t.Errorf("err %v", err)
	}
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// Files that are not ASCII hash as Node.js reads them for the action: UTF-16
// code units, a byte order mark kept, invalid UTF-8 as U+FFFD per maximal
// invalid subsequence (testdata/node-unicode.json).
func TestNodeDecoding(t *testing.T) {
	b, err := os.ReadFile("testdata/node-unicode.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Name   string   `json:"name"`
			Input  []byte   `json:"input_base64"`
			Hashes []string `json:"hashes"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Cases) == 0 {
		t.Fatalf("%v (%d cases)", err, len(doc.Cases))
	}
	for _, c := range doc.Cases {
		for how, r := range map[string]io.Reader{"whole": bytes.NewReader(c.Input), "byte a read": iotest.OneByteReader(bytes.NewReader(c.Input))} {
			if got := all(t, r); strings.Join(got, " ") != strings.Join(c.Hashes, " ") {
				t.Errorf("%s, %s:\n got %v\nwant %v", c.Name, how, got, c.Hashes)
			}
		}
	}
}
