"""Obtaining and preparing treebanks: UD releases, CoNLL 2006/2007 layout, PTB to dependencies."""
