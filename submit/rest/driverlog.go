package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prebake/prebake/internal/redact"
)

// driverLogLines is how many of a failed driver's last stderr lines are kept.
const driverLogLines = 50

// WithMasterUI sets the standalone master's web UI (http://host:port),
// through which a failed driver's log is found: its /json/ names the
// worker's UI, whose /log serves the driver's stderr. The default is port
// 8080 on each master's host.
func WithMasterUI(u string) Option {
	return func(o *options) error { o.masterUI = u; return nil }
}

// masterUIs are the web UIs to ask for the workers: WithMasterUI's, else
// port 8080 of each master host.
func (c *Client) masterUIs() []string {
	if c.o.masterUI != "" {
		return []string{strings.TrimSuffix(c.o.masterUI, "/")}
	}
	var out []string
	for _, u := range c.urls {
		if p, err := url.Parse(u); err == nil && p.Hostname() != "" {
			out = append(out, "http://"+net.JoinHostPort(p.Hostname(), "8080"))
		}
	}
	return out
}

// driverLog finds a standalone driver's log through the master's and the
// worker's web UIs: the worker's log page for the driver's stderr, and its
// last lines. Either is empty when the UIs cannot be reached (a failed
// driver's report never waits on them long).
func (c *Client) driverLog(ctx context.Context, id, workerID string) (page string, tail []string) {
	if workerID == "" {
		return "", nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var worker string
	for _, ui := range c.masterUIs() {
		var st struct {
			Workers []struct {
				ID           string `json:"id"`
				WebUIAddress string `json:"webuiaddress"`
			} `json:"workers"`
		}
		if c.getUI(ctx, ui+"/json/", 1<<20, func(r io.Reader) error { return json.NewDecoder(r).Decode(&st) }) != nil {
			continue
		}
		for _, w := range st.Workers {
			if w.ID == workerID && strings.HasPrefix(w.WebUIAddress, "http") {
				worker = strings.TrimSuffix(w.WebUIAddress, "/")
			}
		}
		if worker != "" {
			break
		}
	}
	if worker == "" {
		return "", nil
	}
	q := url.Values{"driverId": {id}, "logType": {"stderr"}}
	page = worker + "/logPage/?" + q.Encode()
	q.Set("byteLength", "65536")
	var text string
	err := c.getUI(ctx, worker+"/log?"+q.Encode(), 1<<20, func(r io.Reader) error {
		b, err := io.ReadAll(r)
		text = string(b)
		return err
	})
	if err != nil {
		return page, nil
	}
	// The worker's /log starts with "==== Bytes a-b of n of <dir>stderr ====".
	if strings.HasPrefix(text, "==== ") {
		if _, rest, ok := strings.Cut(text, "\n"); ok {
			text = rest
		}
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > driverLogLines {
		lines = lines[len(lines)-driverLogLines:]
	}
	for i, l := range lines {
		lines[i] = redact.Line(l)
	}
	if len(lines) == 1 && lines[0] == "" {
		lines = nil
	}
	return page, lines
}

// getUI GETs a web UI page (at most max bytes) and reads it with read.
func (c *Client) getUI(ctx context.Context, u string, max int64, read func(io.Reader) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.o.httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", u, resp.Status)
	}
	return read(io.LimitReader(resp.Body, max))
}
