package redact_test

import (
	"fmt"

	"github.com/sessionlog/sessionlog/redact"
)

// A request body is redacted in its string values only; everything else
// keeps its bytes. The key here is made up, as every key in these tests.
func ExampleRedactor_JSON() {
	body := []byte(`{"model": "x", "messages": [{"role": "user", "content": "my key is AKIAQ3EXAMPLEKEY7ABC, keep it safe"}]}`)
	out, n, err := redact.Secrets().JSON(body)
	if err != nil {
		panic(err)
	}
	fmt.Println(n, string(out))
	// Output: 1 {"model": "x", "messages": [{"role": "user", "content": "my key is [REDACTED], keep it safe"}]}
}

// A pattern of one's own: with a group named secret, only the group is
// redacted.
func ExampleRegexp() {
	m, err := redact.Regexp("password", `password=(?P<secret>\S+)`)
	if err != nil {
		panic(err)
	}
	r := redact.New(append(redact.SecretMatchers(), m)...)
	out, n := r.Text([]byte("login with password=hunter2 today"))
	fmt.Println(n, string(out))
	// Output: 1 login with password=[REDACTED] today
}
