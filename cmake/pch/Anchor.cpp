// The object that carries the precompiled header (cmake/AttnPch.cmake).
