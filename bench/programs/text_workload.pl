# SPDX-License-Identifier: MIT
# bench/real_programs.sh: the perl workload. Over a text (text.txt): hashes
# of words, bigrams and word shapes, regex matching and substitution of
# every line, sprintf of a record per line, and sorts of all of them.
# Everything printed is sorted (perl's hash order is randomised per run).
# usage: perl text_workload.pl TEXT
use strict;
use warnings;

my (%freq, %bigram, %shape, %first, @recs);
my ($lines, $words, $vowels) = (0, 0, 0);
while (my $line = <>) {
	chomp $line;
	my ($body, $end, $num) = $line =~ /^(.*?)([.,]) (\d+)$/ or next;
	$lines++;
	my @w = split / /, lc $body;
	$words += @w;
	$freq{$_}++ for @w;
	for (my $i = 1; $i < @w; $i += 2) {
		$bigram{"$w[$i - 1] $w[$i]"}++;
	}
	# Word shapes: a run of vowels becomes V, a run of consonants C.
	(my $s = lc $body) =~ tr/aeiou/V/s;
	$s =~ tr/a-z/C/s;
	$shape{$_}++ for split / /, $s;
	$vowels += $s =~ tr/V//;
	push @{ $first{ substr($w[0], 0, 2) } }, $num;
	# Swap the first and last letter of every word, upper-case runs of
	# vowels.
	(my $t = $body) =~ s/\b(\w)(\w*)(\w)\b/$3$2$1/g;
	$t =~ s/([aeiou]{2,})/uc $1/ge;
	push @recs, sprintf("%-12s %08x %3d %s%s", substr($w[-1], 0, 12), $num * 2654435761 % 4294967296,
		scalar(@w), $t, $end);
}

for my $w (sort { $freq{$b} <=> $freq{$a} || $a cmp $b } keys %freq) {
	printf "w %s %d\n", $w, $freq{$w};
}
for my $b (sort { $bigram{$b} <=> $bigram{$a} || $a cmp $b } grep { $bigram{$_} >= 3 } keys %bigram) {
	printf "b %s %d\n", $b, $bigram{$b};
}
for my $s (sort { $shape{$b} <=> $shape{$a} || $a cmp $b } keys %shape) {
	printf "s %s %d\n", $s, $shape{$s};
}
for my $k (sort keys %first) {
	my @n = sort { $a <=> $b } @{ $first{$k} };
	my $sum = 0;
	$sum += $_ for @n;
	printf "f %s %d %d %d %.2f\n", $k, scalar(@n), $n[0], $n[-1], $sum / @n;
}
print "r $_\n" for sort @recs;
printf "lines %d words %d vowels %d distinct %d bigrams %d shapes %d\n",
	$lines, $words, $vowels, scalar(keys %freq), scalar(keys %bigram), scalar(keys %shape);
