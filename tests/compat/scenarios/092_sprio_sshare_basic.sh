# sprio and sshare on the harness clusters, which run priority/basic (Slurm's default): sprio
# refuses with its plugin message (and still checks its options first), sshare has no
# associations to show (no accounting database) and prints its headers.
submit -p parked --wrap true
run sprio
run sprio -l
run sprio -w -n
run sprio -j "$J"
run sprio -l -o %i
run sprio -Z
run sprio -j 1_2
run sprio --usage
run sshare
run sshare -l
run sshare -a -P
run sshare -l -p
run sshare -n
run sshare -o Account,User%20,FairShare
run sshare -o bogus
run sshare -Z
run sshare -e
# --help in drover's own words: its first line and the options it lists are Slurm's
run sh -c "sshare --help | head -1"
run sh -c "sshare --help | python3 $_HARNESS/../help_options.py"
