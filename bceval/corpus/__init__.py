"""Reading a knowledge checkout: its file listing, layers, articles and the knowledge index."""
