%PDF-1.4 this is not python ¤¤
