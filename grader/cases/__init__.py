"""(face: to be written)"""
