// Command hello is the Go hello world bench/cli/run.sh measures the CLIs against.
package main

import "fmt"

func main() { fmt.Println("hello, world") }
