package modelstub_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/fabric-runtime/fabric/modelstub"
)

func Example() {
	script, err := modelstub.ParseScript([]byte(`
rules:
  - match: {contains: "2+2"}
    reply: {text: "4"}
`))
	if err != nil {
		panic(err)
	}
	srv := modelstub.New(script, modelstub.WithExpectKey("sk-test"))
	defer srv.Close()

	// Point a harness at srv.OpenAIBaseURL(), srv.AnthropicBaseURL() or
	// srv.GeminiBaseURL(); here a plain HTTP request stands in for it.
	req, _ := http.NewRequest(http.MethodPost, srv.OpenAIBaseURL()+"/chat/completions",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"What is 2+2?"}]}`))
	req.Header.Set("Authorization", "Bearer sk-test")
	resp, err := srv.Client().Do(req)
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, strings.Contains(string(body), `"content":"4"`))

	r := srv.Requests()[0]
	fmt.Println(r.Endpoint, r.Model, r.AuthHeader, r.KeyOK, r.Rule)
	// Output:
	// 200 true
	// chat.completions m authorization true 0
}
