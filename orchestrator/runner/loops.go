package runner

import (
	"runtime"
	"sync"

	"github.com/ftlab/ftlab/hostagent/agent"
)

// sharedLoops are the event loops in-process agents run on by default:
// one pool per process, one loop per core, made when a run's agents start
// and closed when the last agents using it stop. Runs going at once
// (Options.Lanes) thus share the cores' loops instead of each bringing a
// loop per core of its own: twice the threads on the same cores made
// every timer (paced departures, delay lines) wait for a CPU longer.
var sharedLoops struct {
	sync.Mutex
	pool    *agent.Pool
	users   int
	release func()
}

// leaseLoops returns the shared loops and a function that gives them back.
func leaseLoops() (*agent.Pool, func() error, error) {
	sharedLoops.Lock()
	defer sharedLoops.Unlock()
	if sharedLoops.pool == nil {
		p, err := agent.NewPool(runtime.NumCPU())
		if err != nil {
			return nil, nil, err
		}
		sharedLoops.pool, sharedLoops.release = p, raiseProcs(p.Len())
	}
	sharedLoops.users++
	var once sync.Once
	return sharedLoops.pool, func() (err error) {
		once.Do(func() {
			sharedLoops.Lock()
			defer sharedLoops.Unlock()
			if sharedLoops.users--; sharedLoops.users > 0 {
				return
			}
			err = sharedLoops.pool.Close()
			sharedLoops.release()
			sharedLoops.pool, sharedLoops.release = nil, nil
		})
		return err
	}, nil
}

// procs counts the Ps raised for agent loops.
var procs struct {
	sync.Mutex
	held   []int // extra Ps each holder asked for
	before int   // GOMAXPROCS before the first holder
}

// raiseProcs gives the process a P for each of threads loop threads on top
// of the cores while the returned function is not called. Every loop runs
// on its own locked OS thread, and a thread woken from its wait must get
// one of Go's Ps before it can run: with GOMAXPROCS = cores, loops queue
// for the Ps the runner's goroutines hold and their timers run
// milliseconds late; one P per loop on top of the cores leaves the waiting
// to the kernel's scheduler. Holders at the same time (lanes) add up, and
// the last one out restores what was there before.
func raiseProcs(threads int) func() {
	procs.Lock()
	defer procs.Unlock()
	if len(procs.held) == 0 {
		procs.before = runtime.GOMAXPROCS(0)
	}
	procs.held = append(procs.held, threads)
	setProcsLocked()
	var once sync.Once
	return func() {
		once.Do(func() {
			procs.Lock()
			defer procs.Unlock()
			for i, n := range procs.held {
				if n == threads {
					procs.held = append(procs.held[:i], procs.held[i+1:]...)
					break
				}
			}
			setProcsLocked()
		})
	}
}

func setProcsLocked() {
	if len(procs.held) == 0 {
		runtime.GOMAXPROCS(procs.before)
		return
	}
	need := runtime.NumCPU()
	for _, n := range procs.held {
		need += n
	}
	runtime.GOMAXPROCS(max(need, procs.before))
}
