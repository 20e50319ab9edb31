package prog

// Fib returns the n-th Fibonacci number: Fib(0) = 0, Fib(1) = 1, Fib(n) = Fib(n-1) + Fib(n-2).
func Fib(n int) int {
	if n < 2 {
		return 1
	}
	a, b := 0, 1
	for i := 1; i < n; i++ {
		a, b = b, a+b
	}
	return b
}
