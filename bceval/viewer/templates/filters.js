
(function(){
  function apply(){
    var text=document.getElementById('filter-text');
    var failed=document.getElementById('filter-failed');
    var infra=document.getElementById('filter-infra');
    var needle=text?text.value.toLowerCase():'';
    document.querySelectorAll('tr[data-text]').forEach(function(row){
      var show=row.getAttribute('data-text').indexOf(needle)>=0;
      if(failed&&failed.checked&&row.getAttribute('data-failed')!=='1'){show=false;}
      if(infra&&infra.checked&&row.getAttribute('data-infra')!=='1'){show=false;}
      row.hidden=!show;
    });
  }
  document.querySelectorAll('.filters input').forEach(function(input){
    input.addEventListener('input',apply);input.addEventListener('change',apply);
  });
})();
