package main

import (
	"strconv"

	"github.com/sessionlog/sessionlog/audit"
)

// count returns n and the noun that fits it.
func count(n int, one, many string) string { return audit.Count(n, one, many) }

// step names a step T.S.
func step(turn, s int64) string { return audit.StepName(turn, s) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
