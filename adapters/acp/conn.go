package acp

import (
	"context"
	"io"

	sdk "github.com/coder/acp-go-sdk"
)

// agentConn is the part of an ACP client connection the adapter uses. The
// SDK (github.com/coder/acp-go-sdk) sits behind it.
type agentConn interface {
	Initialize(ctx context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error)
	NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error)
	Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error)
	Cancel(ctx context.Context, p sdk.CancelNotification) error
	Done() <-chan struct{}
}

// dial wires an ACP client connection to an agent's stdio.
func dial(c sdk.Client, toAgent io.Writer, fromAgent io.Reader) agentConn {
	return sdk.NewClientSideConnection(c, toAgent, fromAgent)
}
