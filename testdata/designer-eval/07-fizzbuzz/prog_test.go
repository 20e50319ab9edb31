package prog

import "testing"

func TestFizzBuzz(t *testing.T) {
	for n, want := range map[int]string{1: "1", 3: "Fizz", 5: "Buzz", 15: "FizzBuzz", 30: "FizzBuzz"} {
		if got := FizzBuzz(n); got != want {
			t.Errorf("FizzBuzz(%d) = %q, want %q", n, got, want)
		}
	}
}
