// Package wal is the write-ahead log's file format.
package wal
