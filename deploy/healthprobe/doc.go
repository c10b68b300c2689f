// Command healthprobe is a container health check for images without a shell: it sends one GET
// to each URL given as an argument and exits 0 only if every answer is a 2xx status within the
// timeout (-timeout, default 3s). Anything else prints one line naming the URL and what went
// wrong to stderr and exits 1.
//
//	healthprobe http://127.0.0.1:8081/readyz
//
// The stakeflow images carry it so that Docker and compose health checks can probe the worker's
// /readyz and the sandbox's API.
package main
