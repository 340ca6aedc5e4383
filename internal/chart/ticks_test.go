package chart

import "testing"

func TestNiceStep(t *testing.T) {
	cases := []struct {
		total float64
		n     int
		want  float64
	}{
		{10, 10, 1}, {100, 10, 10}, {95, 10, 10}, {30, 10, 5}, {12, 10, 2}, {0, 10, 1}, {0.3, 3, 0.1}, {7, 0, 1},
	}
	for _, c := range cases {
		if got := NiceStep(c.total, c.n); got < c.want*0.999999 || got > c.want*1.000001 {
			t.Errorf("NiceStep(%v, %d) = %v, want %v", c.total, c.n, got, c.want)
		}
	}
}
