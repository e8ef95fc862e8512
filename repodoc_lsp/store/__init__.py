"""Files of a workspace as stored facts: the scan (ignore rules, regular files), the
content-digest cache and the facts of every file."""
