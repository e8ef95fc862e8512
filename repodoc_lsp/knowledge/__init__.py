"""What the files say together: the symbol graph (relations resolved across files) and the keyword index."""
