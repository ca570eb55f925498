"""Plan builders shared by every family: output projection, statistics, bucket windows."""
