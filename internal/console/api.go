package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/agentctl"
	"github.com/fabric-runtime/fabric/internal/supervisorproto"
)

// maxBody bounds a request body of the console's API.
const maxBody = 64 << 10

// decodeBody reads a JSON body strictly into v.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("body: one JSON object expected")
	}
	return nil
}

// apiAccess runs a key operation through the supervisor's deploy
// operation, exactly as the CLI does. A grant's or rotation's token is
// in the answer once; the console keeps nothing of it.
func (c *Console) apiAccess(w http.ResponseWriter, r *http.Request) {
	// The same payload as fabric deploy access grant|list|rotate|revoke
	// sends.
	var in supervisorproto.AccessPayload
	if err := decodeBody(r, &in); err != nil {
		refuse(w, r, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	switch in.Op {
	case supervisorproto.AccessGrant, supervisorproto.AccessList, supervisorproto.AccessRevoke, supervisorproto.AccessRotate:
	default:
		refuse(w, r, http.StatusBadRequest, "invalid_request", "op: must be grant, list, rotate or revoke")
		return
	}
	payload, err := json.Marshal(in)
	if err != nil {
		refuse(w, r, http.StatusInternalServerError, "internal", err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	resp := c.sup.Deploy(ctx, &agentctl.Request{Operation: agentctl.OpDeploy, OperationID: agentctl.NewOperationID(),
		Action: supervisorproto.ActionAccess, TimeoutSeconds: 30, Payload: payload})
	if resp.Error != nil {
		status := http.StatusConflict
		if resp.Error.Code == agentctl.CodeInvalidRequest {
			status = http.StatusBadRequest
		} else if resp.Error.Code == supervisorproto.CodeNoSuchIntegration {
			status = http.StatusNotFound
		}
		writeJSON(w, status, map[string]any{"error": map[string]string{"code": resp.Error.Code, "message": resp.Error.Message}})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(bytes.TrimSpace(resp.Output), '\n'))
}

// chatRequest is one message of the chat panel.
type chatRequest struct {
	Integration string `json:"integration"`
	Agent       string `json:"agent"`
	Input       string `json:"input"`
	// PreviousResponseID continues the panel's conversation.
	PreviousResponseID string `json:"previous_response_id,omitempty"`
}

// KeyHeader carries the access key the chat panel uses (never a URL
// parameter, never stored).
const KeyHeader = "X-Fabric-Access-Key"

// apiChat sends one message through an access gateway of the deployment
// with the key the operator picked (POST /v1/responses, streamed) and
// relays the gateway's answer as it comes: its status, and its
// server-sent events or error body, unchanged. The gateway decides; the
// console adds no authority of its own.
func (c *Console) apiChat(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimSpace(r.Header.Get(KeyHeader))
	if key == "" {
		refuse(w, r, http.StatusBadRequest, "invalid_request", KeyHeader+": the access key to use is required")
		return
	}
	var in chatRequest
	if err := decodeBody(r, &in); err != nil {
		refuse(w, r, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	if in.Agent == "" || in.Input == "" {
		refuse(w, r, http.StatusBadRequest, "invalid_request", "agent and input are required")
		return
	}
	base := ""
	for _, s := range c.sup.Status().Services {
		if s.ID == in.Integration && s.Access != nil {
			base = s.Access.URL
		}
	}
	if base == "" {
		refuse(w, r, http.StatusNotFound, "no_such_integration", fmt.Sprintf("the deployment runs no access gateway %q", in.Integration))
		return
	}
	body := map[string]any{"model": in.Agent, "input": in.Input, "stream": true}
	if in.PreviousResponseID != "" {
		body["previous_response_id"] = in.PreviousResponseID
	}
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, strings.TrimSuffix(base, "/")+"/v1/responses", bytes.NewReader(b))
	if err != nil {
		refuse(w, r, http.StatusInternalServerError, "internal", err.Error())
		return
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.client.Do(req)
	if err != nil {
		refuse(w, r, http.StatusBadGateway, "gateway_unreachable", "the access gateway did not answer: "+scrub(err.Error(), key))
		return
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(resp.StatusCode)
	fl, _ := w.(http.Flusher)
	buf := make([]byte, 16<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// scrub removes v from s.
func scrub(s, v string) string {
	if v == "" {
		return s
	}
	return strings.ReplaceAll(s, v, contract.Redacted)
}
