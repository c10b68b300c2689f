// Package cli holds what stakeflow's commands share: flags that each have an environment-variable
// twin and may also come from a JSON configuration file (precedence: command line, environment,
// file, default), the Temporal connection settings, and the zap logger the commands build.
package cli
