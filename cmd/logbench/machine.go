package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// machineInfo describes where the run took place. Every field is
// "unknown" when the system does not say (the /proc and /sys files are
// Linux's).
type machineInfo struct {
	date      time.Time
	kernel    string
	cpu       string
	cores     int
	procs     int // GOMAXPROCS
	memory    string
	goVersion string
	// The directory the stores were written to, its filesystem, device
	// and the device's queue settings.
	dir, fs, device, scheduler, writeCache string
	loadStart, loadEnd                     string
	// commit is the repository's HEAD where logbench ran, when git says.
	commit string
}

const unknown = "unknown"

// describeMachine describes this machine, with dir as the disk under
// test.
func describeMachine(dir string) machineInfo {
	m := machineInfo{
		date:      time.Now().UTC(),
		kernel:    firstLine("/proc/sys/kernel/osrelease"),
		cpu:       cpuModel(),
		cores:     runtime.NumCPU(),
		procs:     runtime.GOMAXPROCS(0),
		memory:    memTotal(),
		goVersion: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
		dir:       filepath.Dir(dir),
		loadStart: loadAverage(),
		commit:    gitHead(),
	}
	m.fs, m.device = mountOf(dir)
	m.scheduler, m.writeCache = queueOf(m.device)
	return m
}

// gitHead returns the short hash of the current directory's git HEAD, or
// "unknown".
func gitHead() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil || len(strings.TrimSpace(string(out))) == 0 {
		return unknown
	}
	return strings.TrimSpace(string(out))
}

// firstLine returns the first line of a file, or "unknown".
func firstLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return unknown
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if line = strings.TrimSpace(line); line == "" {
		return unknown
	}
	return line
}

// loadAverage returns the 1, 5 and 15 minute load averages.
func loadAverage() string {
	f := strings.Fields(firstLine("/proc/loadavg"))
	if len(f) < 3 {
		return unknown
	}
	return strings.Join(f[:3], " ")
}

// cpuModel returns the "model name" of /proc/cpuinfo.
func cpuModel() string {
	v := procField("/proc/cpuinfo", "model name")
	if v == "" {
		return unknown
	}
	return v
}

// memTotal returns MemTotal of /proc/meminfo in GiB.
func memTotal() string {
	f := strings.Fields(procField("/proc/meminfo", "MemTotal"))
	if len(f) < 2 || f[1] != "kB" {
		return unknown
	}
	kb, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return unknown
	}
	return strconv.FormatFloat(kb/(1<<20), 'f', 1, 64) + " GiB"
}

// procField returns the value of the first "key: value" line of path
// whose key is key, or "".
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// mountOf returns the filesystem type and device of the mount that holds
// dir: the /proc/mounts entry with the longest mount point above it.
func mountOf(dir string) (fs, device string) {
	fs, device = unknown, unknown
	abs, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return
	}
	b, err := os.ReadFile("/proc/mounts")
	if err != nil {
		return
	}
	best := -1
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		mp := f[1]
		if mp != "/" && abs != mp && !strings.HasPrefix(abs, mp+"/") {
			continue
		}
		if len(mp) >= best { // later entries over the same point win
			best, device, fs = len(mp), f[0], f[2]
		}
	}
	return fs, device
}

// queueOf returns the I/O scheduler and write cache mode of a block
// device (a partition reports its disk's).
func queueOf(device string) (scheduler, writeCache string) {
	scheduler, writeCache = unknown, unknown
	name := strings.TrimPrefix(device, "/dev/")
	if name == device || strings.Contains(name, "/") {
		return
	}
	dev, err := filepath.EvalSymlinks(filepath.Join("/sys/class/block", name))
	if err != nil {
		return
	}
	q := filepath.Join(dev, "queue")
	if _, err := os.Stat(q); err != nil {
		q = filepath.Join(filepath.Dir(dev), "queue") // a partition
	}
	for _, s := range strings.Fields(firstLine(filepath.Join(q, "scheduler"))) {
		if strings.HasPrefix(s, "[") {
			scheduler = strings.Trim(s, "[]")
		}
	}
	if scheduler == unknown && firstLine(filepath.Join(q, "scheduler")) == "none" {
		scheduler = "none"
	}
	writeCache = firstLine(filepath.Join(q, "write_cache"))
	return
}
