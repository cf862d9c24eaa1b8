package policy

// Checks that a pattern match must pass besides its expression. Each takes the matched
// text, which its expression has already shaped.

// digitCountBetween accepts texts with lo to hi ASCII digits.
func digitCountBetween(lo, hi int) func(string) bool {
	return func(s string) bool {
		n := 0
		for i := 0; i < len(s); i++ {
			if '0' <= s[i] && s[i] <= '9' {
				n++
			}
		}
		return lo <= n && n <= hi
	}
}

// digitCountAtLeast accepts texts with at least n ASCII digits.
func digitCountAtLeast(n int) func(string) bool {
	return func(s string) bool {
		need := n
		for i := 0; i < len(s) && need > 0; i++ {
			if isDigit(s[i]) {
				need--
			}
		}
		return need == 0
	}
}

// ssnShape accepts texts starting ddd-.
func ssnShape(s string) bool {
	return len(s) >= 4 && isDigit(s[0]) && isDigit(s[1]) && isDigit(s[2]) && s[3] == '-'
}

// ibanShape accepts texts starting with two letters and two digits.
func ibanShape(s string) bool {
	return len(s) >= 4 && 'A' <= s[0] && s[0] <= 'Z' && 'A' <= s[1] && s[1] <= 'Z' && isDigit(s[2]) && isDigit(s[3])
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// luhnCard accepts 13 to 19 digits (separators ignored), not all the same digit, whose
// Luhn checksum is 0.
func luhnCard(s string) bool {
	digits := make([]byte, 0, 19)
	for i := 0; i < len(s); i++ {
		if c := s[i]; '0' <= c && c <= '9' {
			digits = append(digits, c-'0')
		}
	}
	if len(digits) < 13 || len(digits) > 19 {
		return false
	}
	same := true
	for _, d := range digits[1:] {
		same = same && d == digits[0]
	}
	return !same && luhn(digits)
}

// luhn reports whether digits (0-9 values, check digit last) pass the Luhn check.
func luhn(digits []byte) bool {
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i])
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// validSSN accepts ddd-dd-dddd outside the ranges the US Social Security Administration
// never issues: area 000, 666 and 900-999, group 00, serial 0000.
func validSSN(s string) bool {
	if len(s) != 11 {
		return false
	}
	area, group, serial := s[0:3], s[4:6], s[7:11]
	return area != "000" && area != "666" && area[0] != '9' && group != "00" && serial != "0000"
}

// validIBAN accepts 15 to 34 letters and digits (spaces ignored) whose ISO 13616 check
// passes: moved country code and check digits to the end, letters as 10-35, the number
// mod 97 is 1.
func validIBAN(s string) bool {
	compact := make([]byte, 0, 34)
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' {
			compact = append(compact, s[i])
		}
	}
	if len(compact) < 15 || len(compact) > 34 {
		return false
	}
	rearranged := make([]byte, 0, len(compact))
	rearranged = append(append(rearranged, compact[4:]...), compact[:4]...)
	rem := 0
	for _, c := range rearranged {
		switch {
		case '0' <= c && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case 'A' <= c && c <= 'Z':
			v := int(c-'A') + 10
			rem = (rem*100 + v) % 97
		default:
			return false
		}
	}
	return rem == 1
}
