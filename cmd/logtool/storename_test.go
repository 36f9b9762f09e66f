package main

import "testing"

// TestRedactStore pins the printed form of each kind of store name.
func TestRedactStore(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"sessions.db", "sessions.db"},
		{"/tmp/a b.db", "/tmp/a b.db"},
		{"postgres://u@h/db", "postgres://u@h/db"},
		{"postgres://u:pw@h:5432/db?search_path=s", "postgres://u:xxxxx@h:5432/db?search_path=s"},
		{"postgresql://u@h/db?sslmode=disable&password=pw&PassFile=%2Ftmp%2Fp&sslpassword=k",
			"postgresql://u@h/db?sslmode=disable&password=xxxxx&PassFile=xxxxx&sslpassword=xxxxx"},
		{"postgres://u@h/db?pass%77ord=pw", "postgres://u@h/db?pass%77ord=xxxxx"},
		{"postgres://u@h/db?password=a#b", "postgres://u@h/db?password=xxxxx"},
		{"postgres://u:p#w@h/db", "postgres://…"},
		{"postgres://u:p w@h/db\x1b", "postgres://…"},
		{"host=h password=pw user=u", "host=h password=xxxxx user=u"},
		{"host=h password = 'p w\\' x' sslpassword=k", "host=h password=xxxxx sslpassword=xxxxx"},
	} {
		if got := redactStore(c.in); got != c.want {
			t.Errorf("redactStore(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := storeName("a\x1b[2J.db"); got != `a\x1b[2J.db` {
		t.Errorf("storeName escapes to %q", got)
	}
}
