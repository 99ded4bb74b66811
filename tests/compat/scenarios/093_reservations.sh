# Advance reservations: scontrol create/show/update/delete, their messages and errors, and
# submissions naming a reservation. Every reservation is named (Slurm's counter for unnamed
# ones runs across the whole harness) and deleted at the end.
run scontrol show reservation
run scontrol create reservation starttime=now+1hour duration=30 nodes=node1 users=root reservationname=later
run scontrol show res later
run scontrol -o show res
run scontrol create reservation starttime=now+2hours duration=1-2:03:04 nodes=node2 users=-drovertest flags=daily,flex reservation=rep
run scontrol show res rep
run scontrol create reservation starttime=now+90minutes duration=30 nodes=node1 users=root
run scontrol create reservation starttime=now+90minutes duration=30 nodes=node1 users=root flags=overlap reservationname=ov
run scontrol create reservation starttime=now duration=10 nodes=nosuch users=root
run scontrol create reservation starttime=now nodes=node1 users=root
run scontrol create reservation duration=10 nodes=node1 users=root
run scontrol create reservation starttime=now duration=10 nodes=node1
run scontrol create reservation starttime=now duration=bogus nodes=node1 users=root
run scontrol create reservation starttime=now duration=10 nodes=node1 users=root flags=bogus
run scontrol create reservation starttime=now+3hours duration=10 nodes=node3 users=nosuchuser
run_as drovertest scontrol create reservation starttime=now+3hours duration=10 nodes=node3 users=root
run scontrol update reservationname=later duration=45 flags+=maint users+=drovertest
run scontrol show res later
run scontrol update reservationname=later flags-=maint
run scontrol show res later
run scontrol update reservationname=nosuch duration=5
run scontrol delete reservation nosuch
run scontrol delete reservationname=nosuch
run scontrol show res nosuch
run_as drovertest scontrol delete reservation later
run_as drovertest sbatch --reservation=rep --wrap true
run scontrol delete reservation later
run scontrol delete reservation rep
run scontrol delete reservationname=ov
run scontrol delete reservation root_3
run scontrol show res
