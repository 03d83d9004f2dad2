# SPDX-License-Identifier: MIT
# bash workload for the LD_PRELOAD test: associative arrays, arrays,
# string growth, command substitution, pipes.
declare -A m
for i in $(seq 1 600); do m[k$i]=$(printf %05d "$i"); a+=("x$i"); done
s=
for i in $(seq 1 500); do s=$s$i; done
echo "${#m[@]} ${m[k77]} ${#a[@]} ${#s}"
echo $(ls / | sort | head -3)
unset m a
echo done
