//go:build !linux

package main

import "syscall"

func demoProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
